"""Give a study measured before snapshots existed its own registry.yaml and config.yaml (or kernels.tar.gz).

    python -m matmulstudy.tools.snapshot reports/h100 [reports/h100/repeat ...]
    python -m matmulstudy.tools.snapshot --kernels reports/h100    # its kernels' sources, for the step pages

from the registry and config of the commit their rows name (git show), with
the roles, chapters and size caps the registry has given those variants
since: what was measured is unchanged, only named.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pandas as pd
import yaml

from ..errors import StudyError
from ..report.results import read_results
from ..study.paths import STUDY_FILES
from ..study.registry import Registry, load_registry
from ..study.settings import read_schema, validate
from ..study.snapshot import (CONFIG_FILE, REGISTRY_FILE, kernel_sources, read_config, read_registry, write,
                              write_kernels)

_ROLE_KEYS = ("role", "chapter", "max_size")


def _git_show(commit: str, path: str) -> str:
    proc = subprocess.run(["git", "show", f"{commit}:{path}"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise StudyError(f"git cannot show {path} at {commit}: {proc.stderr.strip()}")
    return proc.stdout


def migrate(folder: Path, label: str | None = None, results: Path | None = None) -> None:
    """Write the snapshot of a study from the commit its results name.

    folder: the study (or a partial one such as reports/h100/repeat);
    label: its label, if not the folder's name; results: the samples.csv.gz
    whose rows name the commit and the arch (default: folder's own).
    """
    folder = Path(folder)
    rows = read_results(results or folder / STUDY_FILES["results"])
    commit = _commit_of(folder, rows)
    live = load_registry()
    old = yaml.safe_load(_git_show(commit, "kernels/registry.yaml"))
    measured = list(dict.fromkeys(rows["variant"]))
    entries = []
    for entry in old["variants"]:
        if entry["id"] not in measured:
            continue
        named = {k: v for k, v in live.raw_entry(entry["id"]).items() if k in _ROLE_KEYS}
        entries.append({**entry, **{k: v for k, v in named.items() if k not in entry}})
    chapters = [c for c in live.raw.get("chapters", []) if any(e.get("chapter") == c["id"] for e in entries)]
    registry = Registry.from_entries({"chapters": chapters, "variants": entries}, where=str(folder),
                                     check_files=False)
    config = yaml.safe_load(_git_show(commit, "config/config.yaml"))
    recorded = read_config(folder)
    config.update({k: v for k, v in recorded.items() if k in config})   # the --config values it ran with
    flags = rows["compiler_flags"].dropna()
    arch = flags.str.extract(r"-arch=(\S+)")[0].dropna()
    config.update(label=label or folder.name, arch=arch.iloc[0] if len(arch) else None, variants=measured)
    known = read_schema()["properties"]
    config = {k: v for k, v in config.items() if k in known}   # keys since moved into the registry
    for key in known:   # keys the study predates: what it did then
        config.setdefault(key, {"sanitizer": False, "sanitizer_shapes": [[1, 1, 1]], "tune": False,
                                "tune_size": 4096, "tune_budget_s": 300, "min_time_s": 0, "placements": 1,
                                "contexts": 1, "contexts_below_ms": 5,
                                "throttle_recovery_s": 0, "max_retakes": 0, "energy_window_s": 0, "headline_rounds": 0,
                                "headline_window_s": 0.5}.get(key))
    settings = validate(config, registry)
    write(folder, registry, settings, note=f"written by `python -m matmulstudy.tools.snapshot` from commit {commit}",
          read=_reader(commit))


def migrate_kernels(folder: Path) -> None:
    """Give a study with its registry.yaml its kernels.tar.gz: the sources at the commit its rows name."""
    folder = Path(folder)
    commit = _commit_of(folder, read_results(folder / STUDY_FILES["results"]))
    write_kernels(folder, kernel_sources(read_registry(folder), _reader(commit)))


def _commit_of(folder: Path, rows: pd.DataFrame) -> str:
    """The one commit a study's rows name."""
    commits = rows["git_commit"].dropna().unique()
    if len(commits) != 1:
        raise StudyError(f"{folder}: its rows name {len(commits)} commits; a study comes from one")
    return commits[0]


def _reader(commit: str):
    """A kernel file's text (a path under kernels/) at `commit`."""
    return lambda path: _git_show(commit, f"kernels/{path}")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folders", type=Path, nargs="+", help="study folders (reports/h100, reports/h100/repeat)")
    p.add_argument("--label", help="the label, if not the folder's name (a repeat: h100-repeat)")
    p.add_argument("--results", type=Path, help="the samples.csv.gz naming the commit, if not the folder's own")
    p.add_argument("--kernels", action="store_true",
                   help="only kernels.tar.gz, from the commit the study's rows name (it has its registry.yaml)")
    args = p.parse_args(argv)
    try:
        for folder in args.folders:
            if args.kernels:
                migrate_kernels(folder)
                print(f"{folder}: kernels.tar.gz written")
                continue
            migrate(folder, args.label, args.results)
            print(f"{folder}: {REGISTRY_FILE} and {CONFIG_FILE} written")
    except StudyError as err:
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
