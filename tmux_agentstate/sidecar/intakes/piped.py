"""What the two FIFO intakes share: each pane's output goes through tmux's `pipe-pane` into a
FIFO of ours (`Fifos`); another program's pipe is never replaced."""
from __future__ import annotations

import logging
import time

from ..config import Config
from ...tmux import Batch, PaneInfo, Tmux
from ..fifos import BELL, NEWS, Fifos
from ..watch import PaneWatch
from .base import Intake

PIPE_SETTLE = 1.0  # our pipe's `cat` starts a moment after the pipe is set: not "lost" before

log = logging.getLogger("tmux_agentstate.sidecar")


class PipedIntake(Intake):
    def __init__(self, tmux: Tmux, config: Config, panes: dict[str, PaneWatch], runtime_dir):
        super().__init__(tmux, config, panes)
        self.runtime_dir = str(runtime_dir)
        self.fifos = Fifos(runtime_dir)
        self._no_fifo: dict[str, str] = {}  # pane id → why it could get no FIFO
        self._said_no_fifo = False

    def hear(self, bell) -> None:
        super().hear(bell)
        self.fifos.listen(bell.fileno() if bell else None)  # one wait for bytes and rings

    def hear_news(self, fd: int | None) -> None:
        super().hear_news(fd)
        self.fifos.listen(fd, NEWS)

    def _ready(self, timeout: float) -> tuple[list[str], bool]:
        """(panes whose FIFOs have bytes, whether the doorbell rang) within `timeout`; tmux's
        news noted (`take_news`)."""
        ready = self.fifos.wait(timeout)
        if NEWS in ready:
            self.heard_news = True
        return [p for p in ready if p not in (BELL, NEWS)], BELL in ready

    def _foreign(self, info: PaneInfo) -> bool:
        """Another program pipes this pane (tmux-logging…): never steal its pipe."""
        ours = info.our_pipe and info.our_pipe.startswith(self.runtime_dir)
        return bool(info.piped and not ours and info.pane_id not in self.fifos.watching())

    def _pipe(self, w: PaneWatch, batch: Batch) -> bool:
        """Pipe the pane into a fresh FIFO. False when none can be had (too many open files,
        no room): the pane is read from tmux's rendering instead (`lost_pipe`)."""
        try:
            fifo = self.fifos.open(w.pane_id)
        except OSError as e:
            self._no_fifo[w.pane_id] = e.strerror or str(e)
            if not self._said_no_fifo:  # said once: at the fd limit, every later pane is so
                self._said_no_fifo = True
                log.warning("%s (%s): no FIFO for it (%s, %d watched by FIFO); this and any "
                            "pane past it are read from tmux's screen instead", w.pane_id,
                            w.info.address, self._no_fifo[w.pane_id], len(self.fifos.watching()))
            return False
        self._no_fifo.pop(w.pane_id, None)
        batch.pipe_to_fifo(w.pane_id, str(fifo))
        w.piped_at = time.monotonic()
        return True

    def detach(self, w: PaneWatch, batch: Batch) -> None:
        batch.close_pipe(w.pane_id)
        self.fifos.close(w.pane_id)

    def recent(self, w: PaneWatch) -> bytes:
        return self.fifos.recent(w.pane_id)

    def forget(self, w: PaneWatch) -> None:
        self._no_fifo.pop(w.pane_id, None)
        self.fifos.close(w.pane_id)

    def close(self) -> None:
        self.fifos.close_all()

    def lost_pipe(self, w: PaneWatch, writing: set[str]) -> str | None:
        if w.pane_id in self._no_fifo:
            return f"could not be made ({self._no_fifo[w.pane_id]})"
        if w.need_seed:
            return None  # not piped yet (emulate pipes at the seed)
        if w.info.piped is False:
            return "was closed by another program"
        if (not w.info.recording and w.piped_at < time.monotonic() - PIPE_SETTLE
                and self.fifos.real_path_for(w.pane_id) not in writing):
            # no process of the server writes our FIFO any more
            return "was replaced or closed by another program"
        return None

    def release(self, w: PaneWatch, batch: Batch) -> None:
        self._no_fifo.pop(w.pane_id, None)
        self.fifos.close(w.pane_id)
        batch.set_pane(w.pane_id, "@agentstate_pipe", None)
