"""The README's numbers written again from the committed studies (report/readme.py).

    python -m matmulstudy.tools.readme            # rewrites README.md's numbers block
    python -m matmulstudy.tools.readme --check    # says whether it is up to date, changes nothing

Run it after committing a study; a test fails while the README and reports/ disagree.
"""

from __future__ import annotations

import argparse
import sys

from ..report import readme
from ..study.paths import ROOT
from ..study.registry import load_registry


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only say whether README.md is up to date")
    args = ap.parse_args(argv)
    path = ROOT / "README.md"
    text = path.read_text()
    try:
        new = readme.replaced(text, readme.block(readme.committed_studies(ROOT / "reports"), load_registry()))
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.check:
        print("README.md's numbers are those of reports/" if new == text else
              "README.md's numbers differ from reports/: run python -m matmulstudy.tools.readme")
        return 0 if new == text else 1
    path.write_text(new)
    print("README.md's numbers written from reports/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
