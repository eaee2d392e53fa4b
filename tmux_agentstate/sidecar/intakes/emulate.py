"""The emulate intake (the default): a pane's bytes, through its FIFO, are parsed by our own
screen (`PaneScreen`), seeded from tmux's rendering (`capture-pane -p`: the screen keeps text
only) in the moment the pipe is set; a pane is pre-checked `settle` after its bytes, at most
every `min_gap`. It sends tmux few commands, and tmux logs each in the user's `show-messages`
(5 busy agents: pipe ~13 a second, emulate ~1; docs/bench/messages-*.txt). A pane whose
parsing costs too much (a flood) is read from tmux instead until it is quiet."""
from __future__ import annotations

import logging
import time

from ..seed import seeded_screen
from ...core.screen import PaneScreen
from ...tmux import Batch, PaneInfo
from ..fifos import CHUNK
from ..watch import PaneWatch
from .base import Wake
from .piped import PipedIntake
from .pipe import HINT_TAIL, PIPE_DRAIN

WORD_TAIL = 64  # bytes of a read kept for the next: a prompt's word cut between two reads

log = logging.getLogger("tmux_agentstate.sidecar")


class EmulateIntake(PipedIntake):
    name = "emulate"

    def __init__(self, *args):
        super().__init__(*args)
        self._counted: dict[str, PaneWatch] = {}  # panes whose bytes were counted since the seed
        self._flooding: dict[str, PaneWatch] = {}  # panes whose bytes are dropped (a flood)
        self._pending: dict[str, PaneWatch] = {}   # panes with a time set to look at them
        # working panes whose bytes since their last look hold a word of a prompt (or the
        # agent's own report): the look at them is not put off (`_put_off`)
        self._worded: set[str] = set()
        self._tails: dict[str, bytes] = {}  # each working pane's last bytes: a word cut by a read

    def new_screen(self, info: PaneInfo) -> PaneScreen:
        return PaneScreen(info.height, info.width)

    def attach(self, w: PaneWatch, batch: Batch) -> bool:
        if self._foreign(w.info) or not self.fifos.room():
            return False  # another program pipes it, or no FIFO to be had: tmux's screen
        self.seed_soon(w)  # piped in the moment its screen is seeded (`seed`)
        return True

    def wait(self, until: float) -> Wake:
        # only the panes whose bytes set a time to look at them: a wait looks at no other
        pending = {p: w for p, w in self._pending.items()
                   if w.due is not None and self._all.get(p) is w and w.intake is self}
        now = time.monotonic()
        due = min((w.due for w in pending.values()), default=until)
        ready, rung = self._ready(min(until, due) - now)
        for pane_id in ready:
            self._on_readable(pane_id)
        pending.update(self._pending)
        now = time.monotonic()
        changed = [w for w in pending.values() if w.due is not None and w.due <= now
                   and not self._put_off(w, now)]
        for w in changed:
            w.due = None
            self._worded.discard(w.pane_id)
        self._pending = {p: w for p, w in pending.items() if w.due is not None}
        return Wake(changed, coalesce=bool(ready), rung=rung)

    def _put_off(self, w: PaneWatch, now: float) -> bool:
        """A working pane that goes on printing, and whose bytes hold no word of a prompt, is
        looked at (the pre-check of its changed rows) once it is quiet for `quiet`, not at
        each pause of its spinner: most of what 50 busy panes' looks cost. A renderer that
        draws a prompt cell by cell (no word in its bytes) is seen at that pause."""
        if (w.state is None or w.state.state != "working" or w.pane_id in self._worded
                or now - w.last_byte >= self.config.quiet):
            return False
        w.due = w.last_byte + self.config.quiet
        return True

    def _may_defer(self, w: PaneWatch) -> bool:
        """Whether this working pane's bytes may wait to be parsed: its look is put off
        (`_put_off`), so nothing reads its screen before then. Not when its bytes since the
        last look hold a prompt's word (looked at `settle` after), nor for a pane in any other
        state (its first bytes are news: working at once)."""
        return (w.state is not None and w.state.state == "working"
                and w.pane_id not in self._worded)

    def _note_words(self, w: PaneWatch, data: bytes) -> bool:
        """Note whether these bytes of a working pane may draw a prompt's words (`_put_off`):
        whether they are the first since its last look that do."""
        if w.state is None or w.state.state != "working" or w.pane_id in self._worded:
            self._tails.pop(w.pane_id, None)
            return False
        hint = w.manifest.blocked_hint
        tail = data[-HINT_TAIL:]
        before = self._tails.get(w.pane_id, b"")
        self._tails[w.pane_id] = tail[-WORD_TAIL:]
        if hint is None or hint.may_be_in(before + tail):
            self._worded.add(w.pane_id)
            return True
        return False

    def _on_readable(self, pane_id: str) -> None:
        # all the FIFO holds, up to past a sweep's byte budget: one chunk per wake (a wake
        # sleeps COALESCE after it) caps reading at ~1.3 MB/s, and a pane printing faster
        # than that piled up a backlog that was never over the budget, so never a flood,
        # and its screen lagged behind by minutes
        data = self.fifos.read(pane_id, self.config.flood_bytes + CHUNK)
        w = self._all.get(pane_id)
        if not data or w is None:
            return
        now, wall = time.monotonic(), time.time()  # `wall`: when the agent's reports came
        self._printing(w, now)
        w.last_byte = now
        self.printed.add(pane_id)
        c = self.config
        if not w.flooding and w.window_bytes + len(data) > c.flood_bytes:
            self._flood(w, f"> {c.flood_bytes} bytes a sweep")
        if w.flooding:
            # dropped; the screen is tmux's, re-read every sweep until the flood stops. The
            # agent's own reports in them still count (a search, not a parse)
            if w.screen.note_bytes(data, wall):
                w.due = now
                self._worded.add(pane_id)  # never put off
                self._pending[pane_id] = w
            return
        w.window_bytes += len(data)
        self._counted[w.pane_id] = w  # its counts start again at the next seed
        worded = self._note_words(w, data)
        if self._may_defer(w):
            # parsed when the screen is next read: at its look, put off till a pause or
            # `busy_classify` (`_put_off`, `worth_classifying`), in one go
            reported = w.screen.defer(data, wall)
        else:
            reported = w.screen.feed(data, wall)
        w.window_parse += w.screen.take_parse_seconds()  # a look's catch-up since, too
        if w.window_parse > c.flood_seconds:
            self._flood(w, f"> {c.flood_seconds * 1000:.0f} ms of parsing a sweep")
        if reported:  # the agent's own report changed: classified and published at once
            w.due = now
            self._worded.add(pane_id)
        elif w.due is None or worded:
            # a look put off till a pause (`_put_off`) comes back to now when a prompt's
            # words come: a dialog drawn just after its spinner was erased
            soon = max(now + c.settle, w.last_classified + c.min_gap)
            w.due = soon if w.due is None else min(w.due, soon)
        self._pending[pane_id] = w

    def worth_classifying(self, w: PaneWatch, now: float) -> bool:
        """At the sweep: a pane that went quiet at once (a turn ended: idle, or a prompt
        drawn), one still printing at most every `busy_classify`: what it prints is
        pre-checked for a prompt as it comes (`Sidecar._early`), so the sweep's look at a busy
        pane finds what a prompt is not (an error mark, the context), and that can wait.
        Quiet is `settle` for a pane that was not working (its first bytes: working at once),
        `quiet` for a working one: a spinner pauses 50-100 ms between frames, and a look at
        each pause was most of the classifications of 50 busy panes (80 a second)."""
        c = self.config
        quiet = c.quiet if w.state is not None and w.state.state == "working" else c.settle
        if w.state is None or now - w.last_byte >= quiet:
            return True
        return now - w.last_classified >= c.busy_classify

    def _flood(self, w: PaneWatch, why: str) -> None:
        """Too much to parse (bytes or time): drop this pane's bytes and take tmux's own
        rendering every sweep instead (tmux parsed them already), until it is quiet."""
        w.flooding = True
        self._flooding[w.pane_id] = w
        log.info("%s: flood (%s): its screen is read from tmux until it stops", w.pane_id, why)

    def detach(self, w: PaneWatch, batch: Batch) -> None:
        super().detach(w, batch)
        self._drop_words(w)

    def forget(self, w: PaneWatch) -> None:
        super().forget(w)
        self._drop_words(w)

    def _drop_words(self, w: PaneWatch) -> None:
        self._worded.discard(w.pane_id)
        self._tails.pop(w.pane_id, None)

    def _pipe_again(self, w: PaneWatch) -> None:
        # the new pipe holds what comes after the capture it is set with (`seed`)
        self.seed_soon(w)

    def listed(self, w: PaneWatch, info: PaneInfo, screens: dict[str, str]) -> None:
        if (info.height, info.width) != (w.screen.lines, w.screen.columns):
            w.screen.resize(info.height, info.width)
            # our screen does not reflow lines as tmux does: seed it again from tmux's
            # rendering, in this sweep
            self.seed_soon(w)

    def seed(self) -> None:
        """Screens that are new, resized or past a flood come from tmux, to go on parsing
        their bytes from there."""
        now = time.monotonic()
        self._late_handoffs(now)
        for w in list(self._flooding.values()):
            if w.flooding and w.intake is self and self._all.get(w.pane_id) is w:
                # every sweep: tmux's screen now, and parsing again once quiet
                self.seed_soon(w)
                w.flooding = now - w.last_byte < self.config.settle * 2
            if not w.flooding:
                del self._flooding[w.pane_id]
        want = fresh = self._take_unseeded()
        before = {}
        for w in want:  # a fresh FIFO, piped in the moment of the capture: it holds exactly
            # the bytes that come after it (what the old FIFO holds is in the capture)
            if w.flooding or w.info.recording:  # its bytes are dropped anyway, or `record`
                # has the pipe (teeing into our FIFO: kept; a byte printed between this drain
                # and the capture is parsed twice)
                self.fifos.read(w.pane_id, PIPE_DRAIN)
                continue
            pipe = Batch()
            if not self._pipe(w, pipe):
                continue  # no FIFO for it: the fallback takes it (`lost_pipe`)
            before[w.pane_id] = pipe.commands
        want = [w for w in want if w.pane_id not in self._no_fifo]
        if want:
            # plain, not -e: the screen keeps text only, and the escapes cost a parse (at a
            # cold start with hundreds of panes, most of the time to the first verdicts)
            views = self.tmux.capture_views([w.pane_id for w in want], escapes=False, before=before)
            for w in want:
                view = views.get(w.pane_id)
                if view is not None:
                    old = w.screen
                    w.screen = seeded_screen(view)
                    w.screen.carry_reports(old)  # tmux keeps no trace of them
                    w.need_seed = False
        for w in fresh:
            if w.need_seed and not w.flooding and not w.info.recording:
                self.seed_soon(w)  # no FIFO, gone meanwhile, a failed capture: the next sweep
        for w in self._counted.values():
            w.window_bytes, w.window_parse = 0, 0.0
        self._counted = {}
