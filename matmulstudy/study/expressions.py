"""Arithmetic of a variant's defines, as the registry writes it: block, tile, grid, shared memory, the
constraints of a search space. Numbers, names of defines, a few operators, min and max; nothing else, so a
registry entry cannot run code."""

from __future__ import annotations

import ast
import functools
import operator
import threading

from ..errors import StudyError

_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
        ast.Mod: operator.mod, ast.Div: operator.truediv}
_CALLS = {"min": min, "max": max}
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge}
# ast.parse from several threads at once can fail in CPython 3.11 ("SystemError: AST constructor recursion depth
# mismatch", python/cpython gh-106905), and the builds run in threads (the tests', the sass snapshots'): one
# parse at a time, each expression once.
_PARSING = threading.Lock()


@functools.lru_cache(maxsize=None)
def _parse(text: str) -> ast.Expression:
    with _PARSING:
        return ast.parse(text, mode="eval")


def _evaluate(expr, defines: dict, integer: bool, condition: bool):
    """Numbers, names of defines, + - * // % (and / unless `integer`), min and max of two or more; with `condition`,
    comparisons joined by and/or too. Nothing else, so a registry entry cannot run code."""
    allowed = "names, integers, + - * // %, min, max" + (", comparisons, and, or" if condition else "")

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in defines:
                raise StudyError(f"registry: '{node.id}' in '{expr}' is not one of the defines {sorted(defines)}")
            return int(defines[node.id])
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS and not (integer and isinstance(node.op, ast.Div)):
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _CALLS
                and len(node.args) >= 2 and not node.keywords):
            return _CALLS[node.func.id](ev(a) for a in node.args)
        if condition and isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
            values = [ev(node.left)] + [ev(c) for c in node.comparators]
            return all(_COMPARE[type(op)](x, y) for op, x, y in zip(node.ops, values, values[1:]))
        if condition and isinstance(node, ast.BoolOp):
            results = [ev(v) for v in node.values]
            return all(results) if isinstance(node.op, ast.And) else any(results)
        raise StudyError(f"registry: '{expr}' is not an expression of the defines (allowed: {allowed})")

    try:
        tree = _parse(str(expr))
    except SyntaxError:
        raise StudyError(f"registry: '{expr}' is not an expression of the defines (allowed: {allowed})") from None
    return ev(tree)


def eval_expr(expr, defines: dict, integer: bool = True):
    """Evaluate a number or an arithmetic expression of the defines (block, tile, flop_per_byte)."""
    if isinstance(expr, (int, float)):
        return expr
    return _evaluate(expr, defines, integer, condition=False)


def holds(condition: str, defines: dict) -> bool:
    """Whether a constraint of a search space (e.g. 'WM * WN == 2048 and BM % WM == 0') holds for the defines."""
    return bool(_evaluate(condition, defines, integer=True, condition=True))
