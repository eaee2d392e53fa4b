"""The loop's side of the doorbell (doorbell.py): a ring is answered at once, instead of at
the next pane listing (every `listing_every`, 5 s).

    hook reports  →  ring `%N`  →  that pane's report and launch read (ONE tmux command for all
                                   the panes rung), classified, what changed published
    session file  →  ring here  →  that pane's session file read again, classified, published

Only panes the sidecar watches count; a ring for any other id is dropped unread. A ring costs
a tmux command only when it comes (none per sweep), and the loop sleeps COALESCE after
answering one, so a flood of rings costs at most one answer per COALESCE.
"""
from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING

from ..tmux import Batch, TmuxError
from .doorbell import Doorbell
from .sessions import SessionFiles
from .watch import PaneWatch, read_session

if TYPE_CHECKING:
    from .loop import Sidecar

log = logging.getLogger("tmux_agentstate.sidecar")


class Rings:
    def __init__(self, sidecar: "Sidecar"):
        self.s = sidecar
        self.bell = Doorbell(sidecar.runtime.dir)
        self.sessions = SessionFiles(self.bell.ring_here)
        self._said: str | None = None
        self.answered = 0  # rings of watched panes answered (the status file says it)

    def start(self) -> None:
        self._open()

    def stop(self) -> None:
        self.sessions.stop()
        self.s.intake.hear(None)
        self.bell.remove()

    def _open(self) -> None:
        self.s.intake.hear(None)  # its descriptor goes: no wait on it meanwhile
        if self.bell.open():
            self.s.intake.hear(self.bell)
            self._said = None
        elif self.bell.problem != self._said:
            self._said = self.bell.problem
            log.warning("%s: hook reports are read at the pane listing only", self.bell.problem)

    def listed(self) -> None:
        """At each listing: the doorbell is still ours (another program removed it or put a
        file or symlink in its place: made afresh, said in one line); the session files of
        the panes watched now."""
        if not self.bell.intact():
            if self.bell.fileno() is not None:
                log.warning("doorbell %s was removed or replaced by another program; made afresh",
                            self.bell.path)
            self._open()
        self.sessions.follow(self.s.panes.values())

    def answer(self) -> None:
        """The doorbell rang: read, classify and publish the rung panes that changed."""
        s = self.s
        hooked, files = self.bell.take(), self.bell.take_here()
        hooked &= s.panes.keys()
        files &= s.panes.keys()
        self.answered += len(hooked) + len(files)
        changed = self._reports(hooked) + [w for w in map(s.panes.get, files) if _reread(w)]
        if not changed:
            return
        batch = Batch()
        for w in {w.pane_id: w for w in changed}.values():
            s._classify(w)
            s.publish.pane(w, batch)
        if batch:
            s.publish.aggregates(list(s.panes.values()), batch)
            s.publish.apply(batch)

    def _reports(self, pane_ids: set[str]) -> list[PaneWatch]:
        """The rung panes whose report or launch changed (read in one command)."""
        if not pane_ids:
            return []
        try:
            options = self.s.tmux.pane_reports(pane_ids)
        except TmuxError as e:  # the listing reads them anyway
            log.debug("reading rung panes' reports: %s", e)
            return []
        changed = []
        for pane_id, (report, launch) in options.items():
            w = self.s.panes.get(pane_id)
            if w is not None and (report, launch) != (w.info.report, w.info.launch):
                w.info = dataclasses.replace(w.info, report=report, launch=launch)
                changed.append(w)
        return changed


def _reread(w: PaneWatch) -> bool:
    """Read the pane's session file again; whether what it says changed."""
    before = w.session
    read_session(w)
    return w.session != before
