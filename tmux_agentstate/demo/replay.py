"""Play raw captured pane bytes back to the terminal at a human pace (benchmarks, tests).

    AGENTSTATE_AGENT=claude python -m tmux_agentstate.demo.replay --rate 800 --loop FILE...

Bytes are written in small bursts averaging `--rate` bytes a second with occasional peaks
(`--peak`), the shape of a real agent's output; `--loop` starts over (the captures begin with
the agent's own start-up, so each pass redraws a whole session); `--from-anywhere` starts the
first pass at a random point, so panes started together do not all draw the same part of a
session at the same time (a benchmark's load then stays the same from minute to minute).
After the last pass it holds the final screen until killed, as an agent waiting at its
prompt would.
"""
from __future__ import annotations

import argparse
import os
import random
import signal
import sys
import time


TICK = 0.1  # seconds between writes


def tick_sizes(rng: random.Random, rate: float, peak: float):
    """Bytes to write at each tick: most at half the mean rate, a few bursts at the peak,
    mean = `rate`."""
    base = rate / 2
    p_burst = (rate - base) / max(peak - base, 1.0)
    while True:
        yield max(1, int((peak if rng.random() < p_burst else base) * TICK))


def writes(captures: list[bytes], rng: random.Random, rate: float = 0, peak: float = 10_000,
           loop: bool = False, from_anywhere: bool = False):
    """What the replay writes, in order: (bytes, paced), `paced` when a tick (TICK) passes
    after it. bench_cost's parse floor takes the same bytes from the same seeds without a
    terminal."""
    sizes = tick_sizes(rng, rate, peak) if rate else None
    # where the first pass starts: a random capture, at a random byte (after its start-up)
    anywhere = from_anywhere
    skip = rng.randrange(len(captures)) if anywhere else 0
    while True:
        for data in captures[skip:]:
            pos = 0
            if anywhere:
                pos, anywhere = rng.randrange(len(data)) if data else 0, False
                yield data[:pos], False
            while pos < len(data):
                n = next(sizes) if sizes else len(data)
                yield data[pos:pos + n], sizes is not None
                pos += n
        skip = 0
        if not loop:
            return


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--rate", type=float, default=0, help="mean bytes/s (0: all at once)")
    ap.add_argument("--peak", type=float, default=10_000, help="bytes/s during a burst")
    ap.add_argument("--loop", action="store_true")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--from-anywhere", action="store_true",
                    help="start the first pass at a random point (the bytes before it at once): "
                         "panes started together are not all at the same part of a session")
    ap.add_argument("--no-hold", action="store_true", help="exit after the last byte")
    args = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    out = sys.stdout.buffer
    captures = []
    for name in args.files:
        try:
            with open(name, "rb") as f:
                captures.append(f.read())
        except OSError as e:
            print(f"replay: {name}: {e.strerror}", file=sys.stderr)
            return 2
    if not any(captures) and args.loop:
        print("replay: nothing to loop: every capture is empty", file=sys.stderr)
        return 2
    for data, paced in writes(captures, random.Random(args.seed), args.rate, args.peak,
                              args.loop, args.from_anywhere):
        out.write(data)
        out.flush()
        if paced:
            time.sleep(TICK)
    if not args.no_hold:
        while True:
            time.sleep(3600)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
