"""A `pipe-pane` reader that keeps when each chunk of the pane's bytes arrived.

    tmux pipe-pane -O -t PANE 'python3 harness/stamppipe.py RAW TIMES'

Appends the bytes to RAW (as `cat >> RAW` would: the drivers read it) and, per chunk read,
one line `<unix time> <offset> <length>` to TIMES. `chunks(raw, times)` reads them back as
[(time, bytes)]. Used by scripts/osc_vs_screen.py through `Recording(stamped=True)`.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path


def main(raw: str, times: str) -> None:
    with open(raw, "ab", buffering=0) as out, open(times, "a", buffering=1) as log:
        offset = out.tell()
        while True:
            data = os.read(0, 65536)
            at = time.time()
            if not data:
                return
            out.write(data)
            log.write(f"{at:.6f} {offset} {len(data)}\n")
            offset += len(data)


def chunks(raw: Path, times: Path) -> list[tuple[float, bytes]]:
    """The recorded chunks in order, each with its arrival time (a torn last line is left out)."""
    data = raw.read_bytes()
    out = []
    for line in times.read_text().splitlines():
        parts = line.split()
        if len(parts) != 3:
            continue
        at, offset, length = float(parts[0]), int(parts[1]), int(parts[2])
        if offset + length > len(data):
            break
        out.append((at, data[offset:offset + length]))
    return out


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
