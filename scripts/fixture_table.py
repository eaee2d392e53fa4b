#!/usr/bin/env python3
"""Seed-style table: each fixture's truth, the verdict on the emulated screen, and the verdict of
the same rules on a stripped 8 KB byte tail (the detector people write first).

    .venv/bin/python scripts/fixture_table.py [--agent NAME]
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tmux_agentstate.core.catalog import BUNDLED_DIR, Catalog  # noqa: E402
from tmux_agentstate.core.fixtures import load_index  # noqa: E402
from tmux_agentstate.core.screen import ScreenView, replay  # noqa: E402

_ESCAPES = re.compile(r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1bP.*?\x1b\\|\x1b\[[0-9;:?<=>]*[ -/]*[@-~]|\x1b.")


def stripped_tail(data: bytes, size: int = 8192) -> ScreenView:
    text = _ESCAPES.sub("", data[-size:].decode("utf-8", "replace"))
    lines = [line.rsplit("\r", 1)[-1] for line in text.split("\n")]
    return ScreenView(lines, len(lines) - 1, "", "")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agent")
    args = ap.parse_args()
    catalog = Catalog([BUNDLED_DIR])
    fixtures = [f for f in load_index() if not args.agent or f.agent == args.agent]
    width = max((len(f.id) for f in fixtures), default=10)
    print(f"{'fixture':<{width}}  {'truth':<8} {'screen':<10} {'8 KB tail, stripped':<10}")
    ok_screen = ok_tail = 0
    for f in fixtures:
        m = catalog.get(f.agent)
        if m is None:
            print(f"{f.id:<{width}}  {f.state:<8} no manifest for {f.agent!r}")
            continue
        data = f.path.read_bytes()
        screen = m.evaluate(replay(data, f.rows, f.cols).view()).state
        tail = m.evaluate(stripped_tail(data)).state
        ok_screen += screen == f.state
        ok_tail += tail == f.state
        mark = lambda s: s if s == f.state else f"{s} \u2717"  # noqa: E731
        print(f"{f.id:<{width}}  {f.state:<8} {mark(screen):<10} {mark(tail):<10}")
    n = len(fixtures)
    print(f"correct: screen {ok_screen}/{n}, stripped tail {ok_tail}/{n}")
    return 0 if ok_screen == n else 1


if __name__ == "__main__":
    raise SystemExit(main())
