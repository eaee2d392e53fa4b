#!/usr/bin/env python3
"""The screen inference (core/infer.py) over every committed fixture: for each capture, the
agent one look at its screen finds (its own, none, or another: must never happen), and the
same capture after `cat` of its transcript in a shell (must be none).

    .venv/bin/python scripts/infer_fixtures.py [-v]
"""
from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tmux_agentstate.core.catalog import Catalog  # noqa: E402
from tmux_agentstate.core.fixtures import load_index  # noqa: E402
from tmux_agentstate.core.infer import present  # noqa: E402
from tmux_agentstate.core.screen import PaneScreen, replay  # noqa: E402

PROMPT = "user@dev:~/src$ "


def cat_screen(text: str, rows: int, cols: int) -> PaneScreen:
    """A shell's screen after `cat FILE` of this transcript, its prompt back below."""
    screen = PaneScreen(rows, cols)
    body = text.rstrip("\n").replace("\n", "\r\n")
    screen.feed(f"{PROMPT}cat transcript.screen.txt\r\n{body}\r\n{PROMPT}".encode())
    return screen


def main() -> int:
    verbose = "-v" in sys.argv
    manifests = list(Catalog().by_name.values())
    tally: dict[str, Counter] = {}
    cat_wrong = []
    another = []
    spent, looks = 0.0, 0
    for f in load_index():
        view = replay(f.path.read_bytes(), f.rows, f.cols).view()
        start = time.perf_counter()
        got = present(manifests, view)
        spent, looks = spent + time.perf_counter() - start, looks + 1
        verdict = "own" if got and got.name == f.agent else ("none" if got is None else "another")
        kept = present(manifests, view, f.agent)  # the same screen once its agent is adopted
        if kept is not None and kept.name != f.agent:
            another.append(f"{f.id} (adopted) → {kept.name}")
        tally.setdefault(f.agent, Counter())["kept"] += kept is not None
        tally.setdefault("all", Counter())["kept"] += kept is not None
        tally.setdefault(f.agent, Counter())[verdict] += 1
        tally.setdefault("all", Counter())[verdict] += 1
        if verdict == "another":
            another.append(f"{f.id} → {got.name}")
        if verbose and verdict != "own":
            print(f"  {verdict:8} {f.id} ({f.state})")
        transcript = f.path.with_suffix(".screen.txt")
        if transcript.exists():
            after = present(manifests, cat_screen(transcript.read_text(), f.rows, f.cols).view())
            tally.setdefault("cat", Counter())["none" if after is None else "agent"] += 1
            if after is not None:
                cat_wrong.append(f"{f.id} → {after.name}")
    print("one look, nothing adopted: own / none / another; once adopted: still seen")
    print(f"{'agent':10} {'own':>5} {'none':>5} {'another':>8} {'kept':>6}")
    for agent, c in sorted(tally.items(), key=lambda kv: (kv[0] in ("all", "cat"), kv[0])):
        if agent == "cat":
            continue
        print(f"{agent:10} {c['own']:5} {c['none']:5} {c['another']:8} {c['kept']:6}")
    c = tally.get("cat", Counter())
    print(f"cat of a transcript, then the shell's prompt: {c['none']} none, {c['agent']} an agent")
    print(f"one look (every manifest): {spent / max(looks, 1) * 1000:.2f} ms on average "
          f"over {looks} screens")
    for line in another + cat_wrong:
        print("  WRONG", line)
    return 1 if another or cat_wrong else 0


if __name__ == "__main__":
    sys.exit(main())
