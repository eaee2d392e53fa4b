#!/usr/bin/env python3
"""The accuracy table in docs/agents.md, generated from the fixtures: per agent, version and
state, how many captures and how many the manifests classify right; the last column, on each
agent's newest captured release, is the release canary's newest registry release and its score
(fixtures/canary.toml, written by scripts/canary; empty without one).

    .venv/bin/python scripts/accuracy_table.py           # print it
    .venv/bin/python scripts/accuracy_table.py --write   # update docs/agents.md between the markers
    .venv/bin/python scripts/accuracy_table.py --manifests DIR   # other rules (e.g. an old
                                                         # commit's manifests/), for before/after

tests/test_readme.py fails when the table in docs/agents.md is stale.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tmux_agentstate.core.catalog import BUNDLED_DIR, Catalog  # noqa: E402
from tmux_agentstate.core.fixtures import (  # noqa: E402
    accuracy_markdown, accuracy_rows, load_canary, load_index,
)

BEGIN, END = "<!-- accuracy-table:begin -->", "<!-- accuracy-table:end -->"
DOC = ROOT / "docs" / "agents.md"  # the accuracy table lives here, between the markers


CANARY = ROOT / "fixtures" / "canary.toml"  # the release canary's last run (scripts/canary)


def canary_results(path: Path = CANARY) -> dict:
    """The canary's results for the last column: {} when there is none; an invalid file is
    one line on stderr (and no values), never a traceback."""
    try:
        return load_canary(path)
    except ValueError as e:
        print(f"accuracy_table: {e}; the newest-release column is left empty", file=sys.stderr)
        return {}


def generated(manifests: Path = BUNDLED_DIR, canary: Path = CANARY) -> str:
    return accuracy_markdown(accuracy_rows(load_index(), Catalog([manifests])), canary_results(canary))


def in_doc(text: str) -> str | None:
    if BEGIN not in text or END not in text:
        return None
    return text.split(BEGIN, 1)[1].split(END, 1)[0].strip()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--manifests", type=Path, default=BUNDLED_DIR, help="the rules to score")
    args = ap.parse_args()
    table = generated(args.manifests)
    if args.manifests != BUNDLED_DIR and args.write:
        ap.error("--write is for the bundled rules only")
    if not args.write:
        print(table)
        return 0
    text = DOC.read_text()
    if in_doc(text) is None:
        sys.exit(f"{DOC.relative_to(ROOT)} has no {BEGIN} … {END} markers")
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    DOC.write_text(f"{head}{BEGIN}\n{table}\n{END}{tail}")
    print(f"{DOC.relative_to(ROOT)} updated")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
