#!/usr/bin/env python3
"""Benchmark: `classify` of a ~100 KB real capture, and screen throughput, ours vs stock pyte.

    .venv/bin/python scripts/bench_classify.py [--kb 100] [--runs 5]

The capture is made by concatenating real fixtures (largest first) until it reaches the size:
real agent output, with its real mix of text, cursor moves, colours and OSCs.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pyte  # noqa: E402

from tmux_agentstate.core.fixtures import load_index  # noqa: E402
from tmux_agentstate.core.screen import PaneScreen  # noqa: E402


def build_capture(kb: int, agent: str | None) -> tuple[bytes, str]:
    fixtures = sorted((f for f in load_index() if not agent or f.agent == agent),
                      key=lambda f: -f.path.stat().st_size)
    if not fixtures:
        sys.exit("no fixtures committed")
    data, used = b"", []
    while len(data) < kb * 1024:
        for f in fixtures:
            data += f.path.read_bytes()
            used.append(f.id)
            if len(data) >= kb * 1024:
                break
    return data[: kb * 1024], fixtures[0].agent


def throughput(feed, data: bytes, chunk: int = 4096, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        feed_all = feed()
        for i in range(0, len(data), chunk):
            feed_all(data[i:i + chunk])
        best = min(best, time.perf_counter() - t0)
    return len(data) / best / 1e6


def ours():
    s = PaneScreen(32, 120)
    return s.feed


def stock():
    s = pyte.Screen(120, 32)
    st = pyte.ByteStream(s)

    def feed(b):
        try:
            st.feed(b)
        except Exception:  # stock pyte raises on some real sequences; count it as parsed
            pass
    return feed


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kb", type=int, default=100)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--agent", default="claude")
    args = ap.parse_args()
    data, agent = build_capture(args.kb, args.agent)
    with tempfile.NamedTemporaryFile(suffix=".raw", delete=False) as tmp:
        tmp.write(data)
    exe = [sys.executable, "-m", "tmux_agentstate", "classify", "--agent", agent, tmp.name]
    walls = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        subprocess.run(exe, check=False, capture_output=True, cwd=ROOT)
        walls.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    bare = time.perf_counter() - t0
    print(f"capture: {len(data)} bytes of real {agent} output")
    print(f"classify wall (incl. interpreter start), median of {args.runs}: "
          f"{statistics.median(walls) * 1000:.0f} ms (bare `python -c pass`: {bare * 1000:.0f} ms)")
    mine, theirs = throughput(ours, data), throughput(stock, data)
    print(f"screen alone, 4 KB chunks: ours {mine:.2f} MB/s, stock pyte {theirs:.2f} MB/s "
          f"({mine / theirs:.1f}x)")
    Path(tmp.name).unlink()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
