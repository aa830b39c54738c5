"""What a built kernel tells the host about how to launch it, read from its cubin without a GPU.

A tensor-core step's file exports its kernel's LaunchFacts (kernels/sm90/gemm.cuh) as `extern "C" __constant__
const LaunchFacts <kernel>_facts`: the dynamic shared memory a block is launched with (sizeof its SharedStorage)
and the bytes of workspace its launch lends it (kernels/sm90/workspace.cuh; 0: none, and it takes a null
pointer). A cubin is an ELF file, and a constant's bytes lie in its section at the offset its symbol gives, so
the build reads them (and records them), the launchers read them, and no formula elsewhere says them again.
"""

from __future__ import annotations

import functools
import os
import struct
from dataclasses import dataclass

from ..errors import StudyError

_SECTION = struct.Struct("<IIQQQQIIQQ")   # Elf64_Shdr: name, type, flags, addr, offset, size, link, info, ...
_SYMBOL = struct.Struct("<IBBHQQ")        # Elf64_Sym: name, info, other, section, value, size
_SYMTAB, _NOBITS = 2, 8


@dataclass(frozen=True)
class LaunchFacts:
    shared_bytes: int      # dynamic shared memory a block is launched with
    workspace_bytes: int   # global memory its launch lends it, zeroed (0: a null pointer)


def _string(data: bytes, offset: int) -> str:
    return data[offset:data.index(b"\0", offset)].decode()


def exported(path, name: str) -> bytes | None:
    """The bytes of the cubin's initialised global symbol `name` (an exported constant), or None where it has
    none; StudyError where the file is not an ELF file."""
    data = _read(os.fspath(path), os.stat(path).st_mtime_ns)
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise StudyError(f"{path} is not a 64-bit ELF file (a cubin built by nvcc -cubin)")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [_SECTION.unpack_from(data, shoff + i * shentsize) for i in range(shnum)]
    for symtab in (s for s in sections if s[1] == _SYMTAB):
        strings = sections[symtab[6]][4]
        for at in range(symtab[4], symtab[4] + symtab[5], _SYMBOL.size):
            st_name, _, _, st_shndx, st_value, st_size = _SYMBOL.unpack_from(data, at)
            if st_shndx == 0 or st_shndx >= len(sections) or _string(data, strings + st_name) != name:
                continue
            section = sections[st_shndx]
            if section[1] == _NOBITS:   # uninitialised: no bytes in the file
                return None
            return data[section[4] + st_value:section[4] + st_value + st_size]
    return None


@functools.lru_cache(maxsize=64)
def _read(path: str, mtime_ns: int) -> bytes:   # the mtime in the key: a rebuilt cubin is read again
    with open(path, "rb") as fh:
        return fh.read()


def launch_facts(path, kernel: str) -> LaunchFacts | None:
    """The kernel's exported LaunchFacts, or None where its cubin exports none (a kernel launched with no dynamic
    shared memory and no workspace parameter)."""
    raw = exported(path, f"{kernel}_facts")
    if raw is None:
        return None
    if len(raw) != 8:
        raise StudyError(f"{path}: {kernel}_facts is {len(raw)} bytes, not gemm.cuh's LaunchFacts (8)")
    return LaunchFacts(*struct.unpack("<II", raw))
