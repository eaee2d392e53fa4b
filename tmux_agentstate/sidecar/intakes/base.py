"""The intake interface: how the screens of the panes an intake holds come to be known.

The loop (`loop.Sidecar`) asks an intake only what is below; it never looks inside one and
never asks which kind it is. Each pane is held by one intake (`PaneWatch.intake`): the one
the user chose, or the capture intake for a pane another program pipes.
"""
from __future__ import annotations

import math
import select
import time

from ..config import Config
from ...core.screen import CapturedScreen, PaneScreen
from ...tmux import Batch, PaneInfo, Tmux
from ..watch import PaneWatch

COALESCE = 0.05  # after bytes came, sleep this long to take more at once (see `Wake`)


class Wake:
    """What a wait brought: panes whose screens changed and are due for the early pre-check,
    whether bytes came (the loop then sleeps COALESCE: a 10 Hz spinner in 50 panes would
    otherwise wake it 500 times a second for ~100 bytes each), and whether the doorbell rang
    (a hook reported: sidecar/doorbell.py; the loop answers it, then sleeps COALESCE too, so a
    flood of rings costs at most one answer per COALESCE)."""
    __slots__ = ("changed", "coalesce", "rung")

    def __init__(self, changed: list[PaneWatch] | None = None, coalesce: bool = False,
                 rung: bool = False):
        self.changed = changed or []
        self.coalesce = coalesce or rung
        self.rung = rung


def readable(fd: int | None, timeout: float, news: int | None = None) -> tuple[bool, bool]:
    """Sleep up to `timeout` seconds or until `fd` or `news` is readable: (whether `fd` is,
    whether `news` is). poll(), not select(): a descriptor past 1024 (hundreds of piped panes)
    is fine."""
    fds = [f for f in (fd, news) if f is not None]
    if not fds:
        time.sleep(max(0.0, timeout))
        return False, False
    p = select.poll()
    for f in fds:
        p.register(f, select.POLLIN)
    ready = {f for f, _ in p.poll(max(0, math.ceil(timeout * 1000)))}
    return fd in ready, news in ready


class Intake:
    """Defaults fit an intake that reads tmux's rendering at the sweep; the FIFO intakes
    (pipe, emulate) override what concerns bytes and pipes."""
    name = ""

    def __init__(self, tmux: Tmux, config: Config, panes: dict[str, PaneWatch]):
        self.tmux = tmux
        self.config = config
        self._all = panes  # the loop's panes; this intake's are those it holds
        self.bell = None   # the doorbell (sidecar/doorbell.py): every wait wakes when it rings
        self.printed: set[str] = set()  # panes whose bytes came since the loop last took them
        self.news_fd: int | None = None  # the control client's output: tmux's notifications
        self._unseeded: dict[str, PaneWatch] = {}  # panes whose screen must come from tmux
        self.heard_news = False          # ...which a wait found readable

    def hear(self, bell) -> None:
        """Wake from every wait when `bell` rings (again after it was made afresh)."""
        self.bell = bell

    def hear_news(self, fd: int | None) -> None:
        """Wake from every wait when `fd` (the control client's output) is readable: tmux has
        news (`Tmux.news` reads it). Again after each connect of the control client."""
        self.news_fd = fd

    def take_news(self) -> bool:
        """Whether a wait since the last call woke for tmux's news."""
        heard, self.heard_news = self.heard_news, False
        return heard

    def panes(self) -> list[PaneWatch]:
        return [w for w in self._all.values() if w.intake is self]

    # -- panes coming and going ------------------------------------------------------------------
    def new_screen(self, info: PaneInfo) -> PaneScreen | CapturedScreen:
        return CapturedScreen(info.height, info.width)

    def attach(self, w: PaneWatch, batch: Batch) -> bool:
        """Start watching `w` (adopted). False: it cannot (another program pipes the pane)."""
        return True

    def take(self, w: PaneWatch) -> None:
        """Hold `w`, from another intake that let it go: its screen comes from tmux again."""
        w.intake = self
        w.screen = self.new_screen(w.info)
        w.flooding = False
        self.seed_soon(w)

    def seed_soon(self, w: PaneWatch) -> None:
        """`w`'s screen must come from tmux at the next `seed` (adopted, resized, taken):
        kept apart, so a sweep with nothing to seed looks at no pane."""
        w.need_seed = True
        self._unseeded[w.pane_id] = w

    def _take_unseeded(self) -> list[PaneWatch]:
        """The panes of this intake still to seed (a pane gone, or now another intake's,
        dropped)."""
        fresh = [w for w in self._unseeded.values()
                 if w.need_seed and w.intake is self and self._all.get(w.pane_id) is w]
        self._unseeded = {}
        return fresh

    def detach(self, w: PaneWatch, batch: Batch) -> None:
        """Stop watching `w`; the pane is still there (the agent left it, or we stop)."""


    def recent(self, w: PaneWatch) -> bytes:
        """The last bytes the pane printed, for a miss report (b"": this intake reads none)."""
        return b""
    def forget(self, w: PaneWatch) -> None:
        """`w`'s pane is gone (tmux closed its pipe already)."""
        self.detach(w, Batch())

    def close(self) -> None:
        """The sidecar stops."""

    # -- the loop ----------------------------------------------------------------------------------
    @property
    def period(self) -> float:
        """Seconds from one sweep to the next."""
        return self.config.interval

    def holds_sweep(self, now: float) -> bool:
        """A sweep due now waits (for a read of screens that is about to happen)."""
        return False

    def wait(self, until: float) -> Wake:
        """Sleep until bytes come, the doorbell rings or `until` (monotonic); take the bytes in."""
        return Wake(rung=self._sleep(until - time.monotonic()))

    def _sleep(self, seconds: float) -> bool:
        """Sleep `seconds`, or less when the doorbell rings or tmux has news: whether it
        rang."""
        rung, news = readable(self.bell.fileno() if self.bell else None, seconds, self.news_fd)
        self.heard_news |= news
        return rung

    def take_printed(self) -> set[str]:
        """The panes that printed since the last call (rechecks.py looks at them)."""
        printed, self.printed = self.printed, set()
        return printed

    def wants_listing(self) -> bool:
        """Every sweep must list the panes (this intake reads its screens with the listing)."""
        return False

    def sweep_read(self, now: float) -> list[PaneWatch]:
        """A sweep without a listing: screens to read now; the changed ones are returned."""
        return []

    def listing_captures(self, now: float) -> list[PaneWatch]:
        """Panes whose screens the listing reads (one round trip with it)."""
        return []

    def listed(self, w: PaneWatch, info: PaneInfo, screens: dict[str, str]) -> None:
        """The listing's news of `w` (before `w.info` is replaced): its size, its screen."""
        if (info.height, info.width) != (w.screen.lines, w.screen.columns):
            w.screen.resize(info.height, info.width)

    def after_listing(self, captured: list[PaneWatch], screens: dict[str, str],
                      seen: set[str]) -> None:
        """The listing is done: `captured` were asked for, `screens` came."""

    def lost_pipe(self, w: PaneWatch, writing: set[str]) -> str | None:
        """How our pipe on `w` went (another program replaced or closed it), or None if it
        did not. `writing`: the paths the tmux server's children write to."""
        return None

    def release(self, w: PaneWatch, batch: Batch) -> None:
        """Let `w` go to another intake (its pipe is another program's now)."""

    def worth_classifying(self, w: PaneWatch, now: float) -> bool:
        return True

    def seed(self) -> None:
        """Screens that must come from tmux now (new panes, and the ones `need_seed` marks)."""
        fresh = self._take_unseeded()
        if not fresh:
            return
        screens = self.tmux.capture([w.pane_id for w in fresh], escapes=False)
        for w in fresh:
            if w.pane_id in screens:
                w.screen.update(screens[w.pane_id], w.info.cursor_y, w.info.title)
                w.need_seed = False
            else:
                self.seed_soon(w)  # gone meanwhile, or a failed capture: at the next sweep
