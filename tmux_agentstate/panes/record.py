"""`record PANE FILE`: a pane's raw output bytes, for a new fixture.

The file starts with the bytes that redraw what the pane shows now (so it replays right from
its start), then gets everything the pane prints. The sidecar's own pipe on the pane is kept
fed meanwhile (`tee` into its FIFO) and handed back at the end; another program's pipe is never
replaced. All tmux access goes through the adapter.
"""
from __future__ import annotations

import errno
import os
import shlex
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ..sidecar.seed import seed_bytes
from .fresh import find_pane
from ..tmux import Batch, PaneInfo, Tmux, cat_into


class RecordError(RuntimeError):
    """Nothing was recorded, and nothing was changed (one line)."""


@dataclass
class Recording:
    tmux: Tmux
    info: PaneInfo
    out: Path
    fifo: str | None  # the sidecar's FIFO, when its pipe was on the pane

    def alive(self) -> bool:
        return self.info.pane_id in self.tmux.pane_ids()

    def stop(self) -> None:
        """Hand the pane back: to the sidecar's FIFO alone, or no pipe at all."""
        if self.fifo and Path(self.fifo).exists():
            self.tmux.pipe_pane(self.info.pane_id, cat_into(self.fifo))
        else:
            self.tmux.pipe_pane(self.info.pane_id, None)
        done = Batch()
        done.set_pane(self.info.pane_id, "@agentstate_recording", None)
        self.tmux.apply(done)


def start(tmux: Tmux, target: str, out: Path, seed: bool = True) -> Recording:
    info = find_pane(tmux, target)
    ours = info.our_pipe if info.piped and info.our_pipe and Path(info.our_pipe).exists() else None
    if info.piped and not ours:
        raise RecordError(f"{info.pane_id} ({info.address}) is already piped by another program; "
                          "not replacing its pipe")
    try:
        out.write_bytes(b"")
    except OSError as e:
        raise RecordError(f"{out}: {e.strerror}") from None
    target_file = shlex.quote(str(out.resolve()))
    stream = (f"exec tee -a {target_file} > {shlex.quote(ours)}" if ours
              else f"exec cat >> {target_file}")
    with tempfile.TemporaryDirectory(prefix="agentstate-record-") as tmp:
        seed_fifo = Path(tmp) / "seed"
        if seed:  # the pipe writes the seed first, then the stream: the seed is only known
            # once captured, in the same moment the pipe starts (no byte missed or doubled)
            os.mkfifo(seed_fifo, 0o600)
            stream = f"cat {shlex.quote(str(seed_fifo))} >> {target_file}; {stream}"
        before = [["pipe-pane", "-O", "-t", info.pane_id, stream],
                  ["set-option", "-p", "-q", "-t", info.pane_id, "@agentstate_recording", str(out)]]
        view = tmux.capture_views([info.pane_id], escapes=True,
                                  before={info.pane_id: before}).get(info.pane_id)
        recording = Recording(tmux, info, out, ours)
        if view is None:
            raise RecordError(f"{info.pane_id} ({info.address}) is gone; nothing recorded")
        if seed and not _hand_over(seed_fifo, seed_bytes(view)):
            recording.stop()
            raise RecordError(f"{info.pane_id} ({info.address}): the pipe did not start; "
                              "nothing recorded")
    return recording


def _hand_over(fifo: Path, data: bytes, timeout: float = 5.0) -> bool:
    """Write `data` to the pipe's shell through its FIFO, once it opens it for reading."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as e:
            if e.errno != errno.ENXIO or time.monotonic() > deadline:
                return False  # no reader yet (ENXIO): the pipe's shell has not started
            time.sleep(0.01)
    try:
        os.set_blocking(fd, True)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return True
    except OSError:
        return False
