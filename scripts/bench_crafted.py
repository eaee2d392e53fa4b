#!/usr/bin/env python3
"""Benchmark: crafted 1 MB inputs through the screen (what `classify` does), one process each.

    .venv/bin/python scripts/bench_crafted.py [--mb 1] [--timeout 30] [--repeat 3] [CASE ...]

Each case is a sequence that is cheap for a terminal but was costly for a Python screen: row
and line edits, insert mode, strings left open, huge parameters, scrolling, and the shortest
tokens alternating. Prints seconds per case, the whole process as `classify` runs it (Python
start-up and imports included): the fastest and slowest of --repeat runs, since a shared
machine's noise only ever adds time. A case over --timeout is reported as such.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MB = 1 << 20


def cases(mb: int) -> dict[str, bytes]:
    n = mb * MB
    return {
        "text": b"hello world " * (n // 12),
        "EL": b"\x1b[K" * (n // 3),
        "ICH": b"\x1b[@" * (n // 3),
        "ICH 9999": b"\x1b[9999@" * (n // 7),
        "insert-mode text": b"\x1b[4h" + b"abcdefghij" * (n // 10),
        "insert-mode 1 char a draw": b"\x1b[4h" + b"a\x07" * (n // 2),
        "DCS unterminated": b"\x1bP" + b"x" * n,
        "DCS opened many times": b"\x1bPx" * (n // 3),
        "OSC unterminated": b"\x1b]0;" + b"x" * n,
        "APC many": b"\x1b_x" * (n // 3),
        "CSI huge parameter": b"\x1b[" + b"9" * n + b"@",
        "IL": b"\x1b[L" * (n // 3),
        "DL": b"\x1b[M" * (n // 3),
        "ED": b"\x1b[2J" * (n // 4),
        "REP": b"a\x1b[9999b" * (n // 8),
        "LF only": b"\n" * n,
        "text + LF": b"x\n" * (n // 2),
        "text + CR LF (a tty's)": b"x\r\n" * (n // 3),
        "log lines + CR LF": b"2026-12-03 12:00:00 INFO request served in 3 ms\r\n" * (n // 50),
        "LF in a scroll region": b"\x1b[5;20r\x1b[20H" + b"x\n" * (n // 2),
        "wide": "界".encode() * (n // 3),
        "combining": ("a" + "\u0301" * 50).encode() * (n // 101),
        "ESC garbage": b"\x1b\x1b" * (n // 2),
        # the shortest tokens, alternating (no batch applies): the cost of one dispatch each
        "text BS": b"x\x08" * (n // 2),
        "text CR": b"x\r" * (n // 2),
        "tabs": b"\t" * n,
        "wide BS": "界\x08".encode() * (n // 4),
        "ESC 7 ESC 8": b"\x1b7\x1b8" * (n // 4),
        "IND RI": b"\x1bD\x1bM" * (n // 4),
        "CUU CUD": b"\x1b[A\x1b[B" * (n // 6),
        "CUP text": b"\x1b[5;5Hx" * (n // 7),
        "EL ED": b"\x1b[K\x1b[J" * (n // 6),
        "IL DL": b"\x1b[L\x1b[M" * (n // 6),
        "CSI distinct": b"".join(b"\x1b[%d;%dH" % (i % 997, i % 991) for i in range(n // 9)),
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    for name, data in cases(args.mb).items():
        if args.names and name not in args.names:
            continue
        code = ("import sys; sys.path.insert(0, %r)\n"
                "from tmux_agentstate.core.screen import replay\n"
                "replay(sys.stdin.buffer.read(), 32, 120)\n") % str(ROOT)
        took = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            try:
                subprocess.run([sys.executable, "-c", code], input=data, check=True,
                               timeout=args.timeout, capture_output=True)
            except subprocess.TimeoutExpired:
                took = None
                break
            took.append(time.perf_counter() - t0)
        shown = (f"> {args.timeout:.0f} s" if took is None
                 else f"{min(took):6.2f} s  (slowest {max(took):.2f} s)")
        print(f"{name:<28} {len(data) / MB:5.2f} MB  {shown}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
