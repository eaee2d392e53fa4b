"""The pipe intake: a pane's bytes are only a signal. `settle` after a pane printed, the
screens of all panes that printed are read as tmux itself rendered them (`capture-pane -p`,
one round trip), at most every `read_gap` (longer, up to `read_gap_max`, while many panes
print at once), by the sweep if one falls due meanwhile. tmux has parsed those bytes already;
a quiet pane costs nothing. The agent's own reports (`OSC 7501`), which tmux keeps no trace of,
are picked out of the bytes by a search; a change of its root report is classified and
published at the next wake, without waiting for a read of screens."""
from __future__ import annotations

import dataclasses
import time

from ...tmux import Batch, PaneInfo
from ..watch import PaneWatch
from .base import Wake
from .piped import PipedIntake

PIPE_DRAIN = 8 << 20  # bytes read from one FIFO at once, at most (never parsed, only searched)


class PipeIntake(PipedIntake):
    name = "pipe"

    def __init__(self, *args):
        super().__init__(*args)
        self._read_at: float | None = None  # when to read the screens of panes that printed
        self._last_read = 0.0
        self._read_gap = self.config.read_gap
        self._captured: list[PaneWatch] = []
        self._reported: list[PaneWatch] = []  # panes whose agent's root report changed

    def attach(self, w: PaneWatch, batch: Batch) -> bool:
        if self._foreign(w.info):
            return False
        if self._pipe(w, batch):
            return True
        self._no_fifo.pop(w.pane_id, None)  # no FIFO to be had: the fallback reads tmux's screen
        return False

    def holds_sweep(self, now: float) -> bool:
        # a sweep due meanwhile waits for the read (≤ read_gap_max) and takes it along
        return self._read_at is not None and now < self._read_at

    def wait(self, until: float) -> Wake:
        now = time.monotonic()
        if self._read_at is not None:
            # a read of screens is set: until then bytes say nothing new, so sleep through
            # them and drain every FIFO once, just before the read (at 50 busy panes: ~170
            # reads a second instead of ~500)
            if self._sleep(self._read_at - now):
                return Wake(rung=True)  # answered now; the read stays set
            for pane_id in self._ready(0)[0]:
                self._on_readable(pane_id)
            now = time.monotonic()
            if self._read_at <= now < until:
                return Wake(self._take_reported(self._read_screens(now)))
            return Wake(self._take_reported())
        ready, rung = self._ready(until - now)
        for pane_id in ready:
            self._on_readable(pane_id)
        return Wake(self._take_reported(), coalesce=bool(ready) and self._read_at is None,
                    rung=rung)

    def _take_reported(self, changed: list[PaneWatch] = ()) -> list[PaneWatch]:
        """`changed`, and the panes whose agent's root report changed since the last wake."""
        reported, self._reported = self._reported, []
        # by pane id: `in` on watches would compare every field of two dataclasses
        read = {w.pane_id for w in changed}
        return list(changed) + [w for w in reported
                                if w.pane_id not in read and self._all.get(w.pane_id) is w]

    def _on_readable(self, pane_id: str) -> None:
        data = self.fifos.read(pane_id, PIPE_DRAIN)  # drained whole, a flood included
        w = self._all.get(pane_id)
        if not data or w is None:
            return
        now = time.monotonic()
        w.last_byte = now
        if w.screen.note_bytes(data, time.time()) and w not in self._reported:
            self._reported.append(w)
        self._want_read(w, now)

    def _want_read(self, w: PaneWatch, now: float) -> None:
        """This pane's screen changed; read it with the others at the next read."""
        w.unread = True
        if self._read_at is None:
            self._read_at = max(now + self.config.settle, self._last_read + self._read_gap)

    def _read_screens(self, now: float) -> list[PaneWatch]:
        """Read the screens of every pane that printed since its last read, as tmux renders
        them, in one round trip. The ones that changed are returned."""
        unread = self._take_unread(now)
        views = self.tmux.capture_views([w.pane_id for w in unread])
        return [w for w in unread if self._take_view(w, views.get(w.pane_id))]

    def _take_unread(self, now: float) -> list[PaneWatch]:
        """The panes a read of screens is for, now that it happens."""
        self._read_at, self._last_read = None, now
        unread = [w for w in self.panes() if w.unread]
        for w in unread:
            w.unread = False  # bytes read from here on ask for another read
        # the more panes print at once, the longer until the next read: a bound on screens
        # read a second, so 50 busy agents cost < 2 % of a core, and still ≤ read_gap_max
        c = self.config
        self._read_gap = min(max(c.read_gap, len(unread) / c.read_rate), c.read_gap_max)
        return unread

    def _take_view(self, w: PaneWatch, view) -> bool:
        if view is None:
            return False
        if (view.report, view.launch) != (w.info.report, w.info.launch):
            # a hook reported (or the agent was launched again): re-combine at the next sweep
            w.info = dataclasses.replace(w.info, report=view.report, launch=view.launch)
            w.screen.dirty = True
        w.screen.resize(view.rows, view.cols)
        return w.screen.update(view.text, view.cursor_y, view.title)

    def sweep_read(self, now: float) -> list[PaneWatch]:
        if self._read_at is not None and self._read_at <= now:
            return self._read_screens(now)  # a due read, sizes and titles with it
        return []

    def listing_captures(self, now: float) -> list[PaneWatch]:
        # a read of screens that is due goes with the listing (one round trip, not two); one
        # not yet due stays set, as reading them twice cost ~40 % more reads at 50 busy panes
        due = self._read_at is not None and self._read_at <= now
        self._captured = self._take_unread(now) if due else []
        return self._captured

    def listed(self, w: PaneWatch, info: PaneInfo, screens: dict[str, str]) -> None:
        # against the screen's size, not the last listing's: a read of screens may have taken
        # a size between two listings, and a resize back would go unseen
        if (info.height, info.width) != (w.screen.lines, w.screen.columns):
            w.screen.resize(info.height, info.width)
            if info.pane_id not in screens:
                # tmux reflowed it (unless read with this listing): the agent may print nothing
                self._want_read(w, time.monotonic())

    def after_listing(self, captured, screens, seen) -> None:
        for w in captured:
            if w.pane_id not in screens and w.pane_id in seen:
                self._want_read(w, time.monotonic())  # its capture failed: the next read
