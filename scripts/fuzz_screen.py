#!/usr/bin/env python3
"""Fuzz: mutated real fixtures through the screen and the classifier, each input time-bounded.

    .venv/bin/python scripts/fuzz_screen.py [--inputs 100000] [--seed 1] [--bound 1.0]

Each input is a real capture (fixtures/), mutated: bytes flipped, escape-sequence fragments
inserted (string openers left open, insert mode, huge parameters, CAN/SUB, alternate screen),
slices repeated, cut, or spliced with another capture. It is replayed at its capture's size
and classified by its agent's manifest. Reported: exceptions (any is a bug), inputs over
`--bound` seconds (SIGALRM stops one at 10x the bound: a hang is counted, not waited for),
and the slowest inputs with what was done to them. Exit 1 on an exception or a hang.
"""
from __future__ import annotations

import argparse
import random
import signal
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tmux_agentstate.core.catalog import Catalog  # noqa: E402
from tmux_agentstate.core.fixtures import load_index  # noqa: E402
from tmux_agentstate.core.screen import replay  # noqa: E402

FRAGMENTS = [b"\x1b", b"\x1b[", b"\x1bP", b"\x1b]", b"\x1b_", b"\x1b^", b"\x1bX", b"\x1b\\",
             b"\x1b[4h", b"\x1b[4l", b"\x1b[9999@", b"\x1b[99999999P", b"\x1b[?1049h",
             b"\x1b[?1049l", b"\x1b[2J", b"\x1b[K", b"\x1b[5;10r", b"\x1b[r", b"\x1b[L", b"\x1b[M",
             b"\x1b[9999b", b"\x1b]0;", b"\x1b]7501;state=", b"\x07", b"\x18", b"\x1a", b"\r",
             b"\n", b"\t", b"\x08", b"\xff", b"\xe2\x9c", b"\xcc\x81", "界".encode(), b"9" * 40,
             b";" * 20, b"\x1b7", b"\x1b8", b"\x1bM", b"\x1bc"]


class Hang(Exception):
    pass


def mutate(rng: random.Random, data: bytes, other: bytes) -> tuple[bytes, str]:
    done = []
    buf = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        op = rng.randrange(6)
        at = rng.randrange(len(buf) + 1)
        if op == 0 and buf:
            buf[min(at, len(buf) - 1)] = rng.randrange(256)
            done.append("flip")
        elif op == 1:
            frag = rng.choice(FRAGMENTS) * rng.choice((1, 1, 1, 8, 200))
            buf[at:at] = frag
            done.append(f"insert {frag[:12]!r}x{len(frag) // max(len(frag[:12]), 1)}")
        elif op == 2 and buf:
            end = min(len(buf), at + rng.randint(1, 4096))
            buf[at:at] = buf[at:end] * rng.randint(2, 20)
            done.append("repeat")
        elif op == 3:
            del buf[at:]
            done.append("cut")
        elif op == 4:
            cut = rng.randrange(len(other) + 1)
            buf[at:at] = other[cut:cut + rng.randint(1, 20000)]
            done.append("splice")
        else:
            buf[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
            done.append("random")
    return bytes(buf), ", ".join(done)


def run(inputs: int, seed: int, bound: float, quiet: bool = False) -> dict:
    rng = random.Random(seed)
    catalog = Catalog()
    fixtures = [f for f in load_index() if catalog.get(f.agent)]
    blobs = {f.id: f.path.read_bytes() for f in fixtures}

    def on_alarm(*_):
        raise Hang()
    old = signal.signal(signal.SIGALRM, on_alarm)
    slowest, exceptions, over, hangs = [], [], 0, 0
    started = time.monotonic()
    try:
        for i in range(inputs):
            fx = rng.choice(fixtures)
            data, how = mutate(rng, blobs[fx.id], blobs[rng.choice(fixtures).id])
            t0 = time.perf_counter()
            signal.setitimer(signal.ITIMER_REAL, bound * 10)
            try:
                screen = replay(data, fx.rows, fx.cols)
                catalog.get(fx.agent).evaluate(screen.view())
            except Hang:
                hangs += 1
            except Exception:  # noqa: BLE001 - every exception is a finding
                exceptions.append((fx.id, how, traceback.format_exc(limit=3)))
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            took = time.perf_counter() - t0
            over += took > bound
            slowest = sorted(slowest + [(took, fx.id, len(data), how)], reverse=True)[:5]
            if not quiet and (i + 1) % 5000 == 0:
                print(f"{i + 1} inputs, {time.monotonic() - started:.0f} s, "
                      f"{len(exceptions)} exceptions, {over} over {bound} s", flush=True)
    finally:
        signal.signal(signal.SIGALRM, old)
    return {"inputs": inputs, "exceptions": exceptions, "over": over, "hangs": hangs,
            "slowest": slowest, "seconds": time.monotonic() - started}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--inputs", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bound", type=float, default=1.0)
    args = ap.parse_args()
    r = run(args.inputs, args.seed, args.bound)
    print(f"{r['inputs']} inputs in {r['seconds']:.0f} s (seed {args.seed}): "
          f"{len(r['exceptions'])} exceptions, {r['over']} over {args.bound} s, "
          f"{r['hangs']} stopped at {args.bound * 10} s")
    for took, fid, size, how in r["slowest"]:
        print(f"  {took:6.3f} s  {size:8d} bytes  {fid}: {how}")
    for fid, how, tb in r["exceptions"][:5]:
        print(f"exception on {fid} ({how}):\n{tb}")
    return 1 if r["exceptions"] or r["hangs"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
