"""`record PANE FILE`: a pane's raw output bytes, for a new fixture.

The file starts with the bytes that redraw what the pane shows now (so it replays right from
its start), then gets everything the pane prints. The sidecar's own pipe on the pane is kept
fed meanwhile (`tee` into its FIFO) and handed back at the end; another program's pipe is never
replaced. All tmux access goes through the adapter.
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from .fresh import find_pane
from .screen import redraw_bytes
from .tmux import PaneInfo, Tmux, cat_into


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


def start(tmux: Tmux, target: str, out: Path, seed: bool = True) -> Recording:
    info = find_pane(tmux, target)
    ours = info.our_pipe if info.piped and info.our_pipe and Path(info.our_pipe).exists() else None
    if info.piped and not ours:
        raise RecordError(f"{info.pane_id} ({info.address}) is already piped by another program; "
                          "not replacing its pipe")
    first = b"" if not seed else redraw_bytes(
        tmux.capture_one(info.pane_id)[info.pane_id], info.height, info.cursor_y,
        info.cursor_x, info.alternate_on, info.title)
    try:
        out.write_bytes(first)
    except OSError as e:
        raise RecordError(f"{out}: {e.strerror}") from None
    target_file = shlex.quote(str(out.resolve()))
    tmux.pipe_pane(info.pane_id, f"exec tee -a {target_file} > {shlex.quote(ours)}" if ours
                   else f"exec cat >> {target_file}")
    return Recording(tmux, info, out, ours)
