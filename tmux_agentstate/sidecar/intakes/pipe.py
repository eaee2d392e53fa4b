"""The pipe intake: a pane's bytes are mostly a signal. The screens of panes that printed are
read as tmux itself rendered them (`capture-pane -p`, one round trip for all of them), `settle`
after their bytes, at most every `read_gap` (longer, up to `read_gap_max`, while many panes
print at once), by the sweep if one falls due meanwhile. tmux has parsed those bytes already;
a quiet pane costs nothing.

A pane that goes on printing (a working agent's spinner, timer and reply) would have its
screen read at every burst, and that is most of what watching it costs. So once its verdict
is `working` (every burst of any other pane is read: the start of a turn, the answer to a
prompt), and but for the first burst after a pause, its bytes are only searched, as they
come, for the text of a prompt (`core/bytetext.py`, against the manifest's blocked
patterns: the same pre-check the screen gets), and its screen is read on a hit, when it goes
quiet for `quiet` (a turn that ended, a prompt that waits), or after `busy_read` of bytes
without a read (a backstop). The agent's own reports (`OSC 7501`),
which tmux keeps no trace of, are picked out of the bytes by a search; a change of its root
report is classified and published at the next wake, without waiting for a read of screens."""
from __future__ import annotations

import dataclasses
import time

from ...core.bytetext import visible_text
from ...tmux import Batch, PaneInfo
from ..watch import PaneWatch
from .base import Wake
from .piped import PipedIntake

HINT_TAIL = 1 << 16  # the bytes of one read searched for a prompt's text, at most
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
        # working panes that printed since their screen was last read: pane → when it was
        self._busy: dict[str, float] = {}
        self._read: dict[str, float] = {}     # pane → when its screen was last read
        self._repipe: dict[str, PaneWatch] = {}  # panes to pipe afresh at the next seed

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
        self._busy_due(now)
        if self._busy and self._read_at is None:
            until = min(until, self._busy_next())
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
        started = now - w.last_byte >= self.config.burst_gap  # first bytes after a pause
        self._printing(w, now)
        w.last_byte = now
        self.printed.add(pane_id)
        if w.screen.note_bytes(data, time.time()) and w not in self._reported:
            self._reported.append(w)
        if w.unread or started or self._eager(w) or self._may_prompt(w, data):
            self._want_read(w, now)
        else:
            self._busy.setdefault(pane_id, now)

    @staticmethod
    def _eager(w: PaneWatch) -> bool:
        """Every burst of this pane is read: its verdict is not `working` (none yet; blocked:
        the bytes after a prompt are most often its answer, and a prompt must leave as fast
        as it came; idle: the bytes are a turn starting, to be seen working while it lasts)."""
        return w.state is None or w.state.state != "working"

    @staticmethod
    def _may_prompt(w: PaneWatch, data: bytes) -> bool:
        """Whether these bytes may draw a prompt: its patterns in their text (bytetext.py)."""
        hint = w.manifest.blocked_hint
        if hint is None:
            return True
        # a spinner frame holds no word of any prompt: no text made of it, no regex run. Only
        # the tail of a flood: a prompt that waits is drawn last, and a search of megabytes
        # could run over a rule's time budget and disable it for good (patterns.Guard)
        tail = data[-HINT_TAIL:]
        return hint.may_be_in(tail) and hint.search(visible_text(tail)) is not None

    def _busy_next(self) -> float:
        """When the next busy pane is due for a read (quiet, or the backstop)."""
        c = self.config
        return min(min(self._all[p].last_byte + c.quiet, self._read.get(p, 0.0) + c.busy_read)
                   for p in self._busy)

    def _busy_due(self, now: float) -> None:
        """Busy panes that went quiet, or printed for `busy_read` unread: read them."""
        c = self.config
        for pane_id in list(self._busy):
            w = self._all.get(pane_id)
            if w is None or w.intake is not self:
                del self._busy[pane_id]
            elif (now - w.last_byte >= c.quiet or now - self._read.get(pane_id, 0.0) >= c.busy_read
                  or self._eager(w)):
                del self._busy[pane_id]
                self._want_read(w, now, settle=0.0)  # quiet already: no more bytes to wait for

    def _want_read(self, w: PaneWatch, now: float, settle: float | None = None) -> None:
        """This pane's screen changed; read it with the others at the next read, `settle`
        from now (by default the config's: more bytes may be on their way)."""
        w.unread = True
        settle = self.config.settle if settle is None else settle
        if self._read_at is None:
            self._read_at = max(now + settle, self._last_read + self._read_gap)

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
            self._read[w.pane_id] = now
            self._busy.pop(w.pane_id, None)
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
        self._busy_due(now)
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

    def forget(self, w: PaneWatch) -> None:
        super().forget(w)
        self._busy.pop(w.pane_id, None)
        self._read.pop(w.pane_id, None)
        self._repipe.pop(w.pane_id, None)

    def _pipe_again(self, w: PaneWatch) -> None:
        self._repipe[w.pane_id] = w

    def seed(self) -> None:
        self._late_handoffs(time.monotonic())
        if self._repipe:
            # a fresh pipe: the bytes on their way in the old one are dropped with it, and
            # the screen is tmux's anyway
            batch = Batch()
            for w in self._repipe.values():
                if self._all.get(w.pane_id) is w and w.intake is self:
                    self._pipe(w, batch)
            self._repipe = {}
            self.tmux.apply(batch)
        super().seed()
