"""Every `<commit>:<path>` reference the tree gives a reader (kernel headers, docs, the package, the committed
studies' pages) names a file that main's history holds, so that `git show <commit>:<path>` reads it in a full
clone; and none names a tag or a branch, which only main's history reaches a reader without (docs/method.md,
"The lab notebook"). A shallow clone has no history to read: there the resolving test skips, with its reason."""

from __future__ import annotations

import re
import subprocess

import pytest

from matmulstudy.study.paths import ROOT

# A commit (7 to 40 hex digits) and a path in its tree: a letter first, a folder or an extension in it.
REFERENCE = re.compile(r"(?<![\w/-])([0-9a-f]{7,40}):([A-Za-z_][\w.-]*(?:/[\w.-]+)*/?)")
# A path of the repository's folders after a name that is no commit: a tag or a branch, which only main's history
# reaches a reader without (a name of hex digits alone is a commit: REFERENCE's).
NAMED = re.compile(r"(?<![\w/-])([A-Za-z][\w./-]*[\w-]):((?:notes|kernels|matmulstudy|docs|tests|reports|workflow)/)")
COMMIT = re.compile(r"[0-9a-f]{7,40}")


def git(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=ROOT, input=stdin, capture_output=True, text=True)


def tracked_texts() -> dict[str, str]:
    """Every tracked file that reads as text, by its path, but this one (whose planted references are false)."""
    texts = {}
    for path in git("ls-files", "-z").stdout.split("\0"):
        if not path or path == "tests/test_references.py":
            continue
        try:
            texts[path] = (ROOT / path).read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue
    return texts


def references(text: str) -> set[tuple[str, str]]:
    """The (commit, path) pairs a text names, a folder's trailing slash dropped."""
    return {(commit, path.rstrip("/")) for commit, path in REFERENCE.findall(text) if "/" in path or "." in path}


def unresolved(pairs: set[tuple[str, str]]) -> list[str]:
    """The `commit:path` of each pair that this clone's history does not hold (one `git cat-file` for all)."""
    ordered = sorted(pairs)
    query = "".join(f"{commit}:{path}\n" for commit, path in ordered)
    answers = git("cat-file", "--batch-check", stdin=query).stdout.splitlines()
    return [f"{c}:{p}" for (c, p), answer in zip(ordered, answers, strict=True) if answer.endswith("missing")]


def shallow_reason() -> str | None:
    proc = git("rev-parse", "--is-shallow-repository")
    if proc.returncode != 0:
        return f"not a git clone: {proc.stderr.strip()}"
    if proc.stdout.strip() == "true":
        return "a shallow clone holds no history to resolve commit:path in (git fetch --unshallow)"
    return None


def test_the_reference_pattern_finds_a_commit_and_path_and_nothing_else():
    text = ("see 6fbf69a:notes/power_cap.md and (6fbf69a:notes/late_draw/), at 09:46:04, "
            "GPU-e3344502-c9fc, commit `4f994d6`, deadbeef:x")
    assert references(text) == {("6fbf69a", "notes/power_cap.md"), ("6fbf69a", "notes/late_draw")}


def test_every_commit_path_reference_resolves_in_main_s_history():
    if reason := shallow_reason():
        pytest.skip(reason)
    pairs = set().union(*(references(text) for text in tracked_texts().values()))
    assert ("6fbf69a", "notes/power_cap.md") in pairs   # the docs' own example is among those checked
    assert unresolved(pairs) == []


def test_a_reference_to_a_file_no_commit_holds_is_reported():
    if reason := shallow_reason():
        pytest.skip(reason)
    planted = references("6fbf69a:notes/no_such_note.md, 6fbf69a:notes/power_cap.md, 0000000:README.md")
    assert unresolved(planted) == ["0000000:README.md", "6fbf69a:notes/no_such_note.md"]


def test_no_reference_names_an_unpublished_tag_or_branch():
    named = {path: sorted({f"{name}:{folder}" for name, folder in NAMED.findall(text) if not COMMIT.fullmatch(name)})
             for path, text in tracked_texts().items()}
    assert {path: names for path, names in named.items() if names} == {}


# What a reader cannot follow: an issue of the tracker ("issue 60"), which only the team sees, and a section of
# the README that the README no longer holds (the pages named "the README's 'The GPU under its power cap'" after
# it moved to docs/method.md).
ISSUE = re.compile(r"\b[Ii]ssue #?\d+\b(?!%)")   # "issue 60"; not the verb ("issues 4 HGMMA", "issues 3% fewer")
README_SECTION = re.compile(r"the README's \\?[\"“]([^\"”\\]+)\\?[\"”]")


def test_no_file_a_reader_gets_cites_the_tracker_or_a_readme_section_that_is_gone():
    headings = {line.lstrip("#").strip() for line in (ROOT / "README.md").read_text().splitlines()
                if line.startswith("#")}
    issues, sections = [], []
    for path, text in tracked_texts().items():
        # a study's snapshot of its kernels, and its step pages that show their headers, are the code as measured
        snapshot = re.match(r"reports/[^/]+/(kernels|steps)/", path)
        if snapshot or not path.startswith(("docs/", "kernels/", "matmulstudy/", "reports/", "workflow/", "README")):
            continue
        issues += [f"{path}: {m.group(0)}" for m in ISSUE.finditer(text)]
        sections += [f"{path}: {m.group(1)}" for m in README_SECTION.finditer(text) if m.group(1) not in headings]
    assert not issues, issues[:10]
    assert not sections, sections[:10]


def test_the_citation_check_finds_a_planted_issue_and_a_missing_section():
    assert ISSUE.search("as issue 60 asked") and not ISSUE.search("tissue 6 of them")
    assert not ISSUE.search("each warp issues 4 HGMMA") and not ISSUE.search("it issues 3% fewer")
    assert README_SECTION.search('says (the README\'s \\"The GPU under its power cap\\").').group(1) == \
        "The GPU under its power cap"
