"""What the two FIFO intakes share: each pane's output goes through tmux's `pipe-pane` into a
FIFO of ours (`Fifos`), or, once a pane has printed without a pause for HANDOFF_AFTER, into a
socket tmux writes and we read with no `cat` between (handoff.py); another program's pipe is
never replaced."""
from __future__ import annotations

import logging
import os
import time

from ..config import Config
from ...tmux import Batch, PaneInfo, Tmux
from ..fifos import BELL, NEWS, Fifos
from ..handoff import HANDOFF, WAIT as HANDOFF_WAIT, Handoff
from ..watch import PaneWatch
from .base import Intake

PIPE_SETTLE = 1.0  # our pipe's `cat` starts a moment after the pipe is set: not "lost" before
HANDOFF_AFTER = 3.0  # a pane printing this long without a pause gets its pipe handed to us

log = logging.getLogger("tmux_agentstate.sidecar")


class PipedIntake(Intake):
    def __init__(self, tmux: Tmux, config: Config, panes: dict[str, PaneWatch], runtime_dir):
        super().__init__(tmux, config, panes)
        self.runtime_dir = str(runtime_dir)
        self.fifos = Fifos(runtime_dir)
        self._no_fifo: dict[str, str] = {}  # pane id → why it could get no FIFO
        self._said_no_fifo = False
        self.handoff = Handoff(runtime_dir)
        self.fifos.listen(self.handoff.fileno(), HANDOFF)
        # panes whose pipe's hand-over is on its way: pane id → (watch, when piped)
        self._handing: dict[str, tuple[PaneWatch, float]] = {}

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
        if HANDOFF in ready:
            self._take_handed()
        return [p for p in ready if p not in (BELL, NEWS, HANDOFF)], BELL in ready

    # -- hand-overs (handoff.py) -------------------------------------------------------------------
    def _printing(self, w: PaneWatch, now: float) -> None:
        """Its bytes came (before `last_byte` moves on): a pane that has printed without a
        pause for HANDOFF_AFTER has its pipe handed to us. One that waits keeps its `cat`
        (asleep: a hand-over costs a Python start)."""
        if now - w.last_byte >= self.config.burst_gap:
            w.printing_since = now
        elif (not w.handoff and now - w.printing_since >= HANDOFF_AFTER and self.handoff.usable
              and not w.flooding and not w.info.recording and w.pane_id not in self._no_fifo):
            w.handoff = True
            self._pipe_again(w)

    def _pipe_again(self, w: PaneWatch) -> None:
        """Set `w`'s pipe afresh at the next seed (`_pipe` chooses a `cat` or a hand-over)."""
        raise NotImplementedError

    def _take_handed(self) -> None:
        for pane_id, fd in self.handoff.accept():
            w, _ = self._handing.pop(pane_id, (None, 0.0))
            if w is None or self._all.get(pane_id) is not w or w.intake is not self:
                os.close(fd)  # gone, or no longer ours to read: never read
            elif self.fifos.take_socket(pane_id, fd):
                log.debug("%s: its pipe is handed over, no cat between", pane_id)

    def _late_handoffs(self, now: float) -> None:
        """Hand-overs that did not come (the command failed: the interpreter gone in an
        update, say): the pane gets its `cat` again, and no hand-over is tried any more."""
        late = [w for w, at in self._handing.values() if now - at > HANDOFF_WAIT]
        if not late:
            return
        if not self.handoff.broken:
            log.warning("%s: its pipe was not handed over within %.0f s; busy panes keep their "
                        "cat from now on", late[0].pane_id, HANDOFF_WAIT)
        self.handoff.broken = True
        for w in late:
            self._handing.pop(w.pane_id, None)
            self.handoff.forget(w.pane_id)
            w.handoff = False
            if self._all.get(w.pane_id) is w and w.intake is self:
                self._pipe_again(w)

    def _forget_handoff(self, w: PaneWatch) -> None:
        self._handing.pop(w.pane_id, None)
        self.handoff.forget(w.pane_id)

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
        w.piped_at = time.monotonic()
        command = None
        if w.handoff and self.handoff.usable:
            command = self.handoff.command(w.pane_id)
            self._handing[w.pane_id] = (w, w.piped_at)
        else:
            self._forget_handoff(w)
        batch.pipe_to_fifo(w.pane_id, str(fifo), command)
        return True

    def detach(self, w: PaneWatch, batch: Batch) -> None:
        batch.close_pipe(w.pane_id)
        self.fifos.close(w.pane_id)
        self._forget_handoff(w)

    def recent(self, w: PaneWatch) -> bytes:
        return self.fifos.recent(w.pane_id)

    def forget(self, w: PaneWatch) -> None:
        self._no_fifo.pop(w.pane_id, None)
        self.fifos.close(w.pane_id)
        self._forget_handoff(w)

    def close(self) -> None:
        self.fifos.close_all()
        self.handoff.close()

    def lost_pipe(self, w: PaneWatch, writing: set[str]) -> str | None:
        if w.pane_id in self._no_fifo:
            return f"could not be made ({self._no_fifo[w.pane_id]})"
        if w.need_seed:
            return None  # not piped yet (emulate pipes at the seed)
        if w.pane_id in self._handing:
            return None  # its hand-over is on its way (one that fails closes the pipe too)
        if w.info.piped is False:
            return "was closed by another program"
        if self.fifos.socket_open(w.pane_id):
            return None  # tmux writes into our own socket
        if (not w.info.recording and w.piped_at < time.monotonic() - PIPE_SETTLE
                and self.fifos.real_path_for(w.pane_id) not in writing):
            # no process of the server writes our FIFO any more
            return "was replaced or closed by another program"
        return None

    def release(self, w: PaneWatch, batch: Batch) -> None:
        self._no_fifo.pop(w.pane_id, None)
        self.fifos.close(w.pane_id)
        self._forget_handoff(w)
        batch.set_pane(w.pane_id, "@agentstate_pipe", None)
