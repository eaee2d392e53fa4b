"""The sidecar: one per tmux server. Watches agent panes, classifies, publishes options.

Every intake ends the same way: a pane whose changed rows could hold a prompt (its manifest's
blocked patterns, a cheap pre-check) is classified at once, and only a change into or out of
`blocked` is published at once; every `interval` a sweep re-reads panes, processes and reports,
classifies what changed and publishes, in one batch. They differ in how a screen is known:
- pipe: each agent pane's output goes through `pipe-pane` into a FIFO, but the bytes
  are only a signal: `settle` after a pane printed, the screens of all panes that printed are
  read as tmux itself rendered them (`capture-pane -p`, one round trip), at most every
  `read_gap` (longer, up to `read_gap_max`, while many panes print at once), by the sweep
  if one falls due meanwhile. tmux has parsed those bytes already; a quiet pane costs nothing.
- emulate (default: it sends tmux few commands, and tmux logs each in show-messages): the
  same bytes are parsed by our own screen (`PaneScreen`), seeded from
  `capture-pane -e`; a pane is pre-checked `settle` after its bytes, at most every `min_gap`.
- capture: no pipes; every `capture_interval` one round trip lists the panes and reads every
  agent pane's rendering.
"""
from __future__ import annotations

import dataclasses
import logging
import os
import signal
import threading
import time
from dataclasses import dataclass, field

from . import procs
from .catalog import Catalog
from .combine import PaneState, Report, combine, newest
from .config import URGENCY, Config
from .fresh import seeded_screen, session_report
from .intake import CHUNK, FifoIntake
from .manifest import Manifest, take_faults
from .notify import Notifier, ring
from .runtime import Runtime
from .screen import CapturedScreen, PaneScreen
from .tmux import Batch, ClientInfo, PaneInfo, ServerGone, Tmux, TmuxError, tmux_quote
from .wiring import PUBLISHED_PANE_OPTIONS as PANE_OPTIONS

log = logging.getLogger("tmux_agentstate.sidecar")

DETAIL_MAX = 200
COALESCE = 0.05
PIPE_DRAIN = 8 << 20  # pipe intake: bytes read from one FIFO at once, at most


@dataclass
class PaneWatch:
    info: PaneInfo
    manifest: Manifest
    pgid: int
    screen: PaneScreen | CapturedScreen
    mode: str = "pipe"                 # pipe | emulate | capture (capture intake, or another
                                       # plugin's pipe is on the pane)
    state: PaneState | None = None
    since: float = 0.0
    last_classified: float = 0.0
    window_bytes: int = 0              # bytes parsed since the last sweep
    window_parse: float = 0.0          # seconds spent parsing them
    flooding: bool = False             # over budget: bytes are read and dropped
    need_seed: bool = True
    piped_at: float = 0.0              # when our pipe was last set on it (monotonic)
    last_byte: float = 0.0
    unread: bool = False               # pipe: bytes came since its screen was last read
    published: dict = field(default_factory=dict)
    screen_state: str | None = None    # the screen rules' own verdict, last classification
    screen_changed_at: float = 0.0     # unix time that verdict last changed (0: unknown)
    session: Report | None = None      # Claude's session file, as a report
    seen_at: float | None = None       # unix time a client last showed this pane
    fg: procs.Foreground | None = None

    @property
    def piped(self) -> bool:
        """Its output goes through our `pipe-pane` FIFO (pipe and emulate intakes)."""
        return self.mode != "capture"


class Sidecar:
    def __init__(self, tmux: Tmux, runtime: Runtime, catalog: Catalog | None = None,
                 config: Config | None = None):
        self.tmux = tmux
        self.runtime = runtime
        self.catalog = catalog or Catalog()
        self.config = config or Config()
        self.intake = FifoIntake(runtime.dir)
        self.panes: dict[str, PaneWatch] = {}
        self._due: dict[str, float] = {}      # pane → when to classify it (a change is pending)
        self._identity: dict[str, tuple[tuple, str | None]] = {}  # pane → (foreground key, agent)
        self._windows: dict[str, str] = {}   # window id → published @agentstate_window
        self._summary: str | None = None
        self._clients: list[ClientInfo] = []
        self._stop = threading.Event()
        self._reload = threading.Event()
        self._observer = None
        self._handler = None
        self._watched_dirs: set = set()
        self.notifier = Notifier(self.config.notify)
        self._notes: list[tuple[PaneWatch, str, str | None]] = []  # (pane, state, old) to tell
        self._fg: dict[str, procs.Foreground | None] = {}
        self._next_full = 0.0
        self._next_listing = 0.0             # when the sweep lists panes from tmux again
        self._foregrounds: dict[str, tuple[int, tuple]] = {}  # pane → (pane pid, foreground key)
        self._server_pid = 0
        self._children: frozenset | None = None  # the tmux server's child processes
        self._read_at: float | None = None   # pipe: when to read the screens of panes that printed
        self._last_read = 0.0
        self._read_gap = self.config.read_gap
        self.sweeps = 0
        self.classifications = 0

    # -- lifecycle ---------------------------------------------------------------------------
    def stop(self, *_):
        self._stop.set()

    def run(self) -> None:
        signal.signal(signal.SIGTERM, self.stop)
        signal.signal(signal.SIGINT, self.stop)
        signal.signal(signal.SIGHUP, lambda *_: self._reload.set())
        self._watch_manifests()
        self.tmux.use_control()
        for e in self.catalog.errors:
            log.error("manifest error: %s", e)
        server_gone = False
        try:
            self._server_pid = self.tmux.server_pid()
            badge = Batch()  # the window badge's format, from the user's icons and styles
            badge.set_global("@agentstate_badge", self.config.badge_format())
            self._apply(badge)
            next_sweep = time.monotonic()
            while not self._stop.is_set():
                now = time.monotonic()
                if now >= next_sweep and (self._read_at is None or now >= self._read_at):
                    self.sweep()
                    next_sweep = now + (self.config.capture_interval
                                        if self.config.intake == "capture" else self.config.interval)
                    continue
                if self._read_at is not None:
                    # pipe intake, a read of screens is set: until then bytes say nothing new,
                    # so sleep through them and drain every FIFO once, just before the read
                    # (at 50 busy panes: ~170 reads a second instead of ~500). A sweep due
                    # meanwhile waits for it (≤ read_gap_max) and takes it along: one round trip
                    time.sleep(max(0.0, self._read_at - now))
                    for pane_id in self.intake.wait(0):
                        self._on_readable(pane_id)
                    now = time.monotonic()
                    if self._read_at <= now < next_sweep:
                        self._read_screens(now)
                    continue
                due = min(self._due.values(), default=next_sweep)
                ready = self.intake.wait(min(next_sweep, due) - now)
                for pane_id in ready:
                    self._on_readable(pane_id)
                now = time.monotonic()
                if self._due and min(self._due.values()) <= now:
                    self._classify_due(now)
                if ready and self._read_at is None:
                    # coalesce: a 10 Hz spinner in 50 panes would otherwise wake us 500 times
                    # a second for ~100 bytes each; this adds at most COALESCE to any latency
                    time.sleep(COALESCE)
        except ServerGone:
            log.info("tmux server is gone; exiting")
            server_gone = True
        finally:
            self.shutdown()
        if server_gone:
            self.runtime.remove()  # its FIFOs, lock, log and status have no server to serve

    def shutdown(self) -> None:
        if self._observer is not None:
            self._observer.stop()
        batch = Batch()
        for w in list(self.panes.values()):
            self._unpublish(w, batch)
        for window in self._windows:
            batch.set_window(window, "@agentstate_window", None)
        batch.set_global("@agentstate_summary", None)
        try:
            self.tmux.apply(batch)
        except TmuxError:
            pass
        self.tmux.close()
        self.intake.close_all()
        self.panes.clear()

    def _watch_manifests(self) -> None:
        """Hot reload: watchdog wakes us on a change; the reload itself runs in the loop. A
        manifest folder that does not exist yet (the user's, before they make it) is watched
        from the listing that first sees it (see `_watch_new_folders`)."""
        try:
            from watchdog.events import FileSystemEventHandler
            from watchdog.observers import Observer
        except ImportError:  # pragma: no cover
            return
        reload = self._reload

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event):
                if str(event.src_path).endswith(".toml") or event.is_directory:
                    reload.set()

        self._handler = Handler()
        observer = Observer()
        observer.daemon = True
        observer.start()
        self._observer = observer
        self._watch_new_folders(initial=True)

    def _watch_new_folders(self, initial: bool = False) -> None:
        if self._observer is None:
            return
        for d in self.catalog.dirs:
            if d not in self._watched_dirs and d.is_dir():
                self._observer.schedule(self._handler, str(d), recursive=False)
                self._watched_dirs.add(d)
                if not initial:
                    self._reload.set()  # a folder made after we started: read it now

    # -- bytes in ------------------------------------------------------------------------------
    def _on_readable(self, pane_id: str) -> None:
        w = self.panes.get(pane_id)
        # pipe: drained whole (the bytes are only searched, never parsed), a flood included
        data = self.intake.read(pane_id, PIPE_DRAIN if w is not None and w.mode == "pipe" else CHUNK)
        if not data or w is None:
            return
        now = time.monotonic()
        w.last_byte = now
        if w.mode == "pipe":  # tmux renders these bytes; they only say the screen changed
            w.screen.note_bytes(data)
            self._want_read(w, now)
            return
        if w.flooding:
            return  # dropped; the screen is tmux's, re-read every sweep until the flood stops
        if w.window_bytes + len(data) > self.config.flood_bytes:
            self._flood(w, f"> {self.config.flood_bytes} bytes a sweep")
            return
        w.window_bytes += len(data)
        started = time.perf_counter()
        w.screen.feed(data)
        w.window_parse += time.perf_counter() - started
        if w.window_parse > self.config.flood_seconds:
            self._flood(w, f"> {self.config.flood_seconds * 1000:.0f} ms of parsing a sweep")
        if pane_id not in self._due:
            self._due[pane_id] = max(now + self.config.settle, w.last_classified + self.config.min_gap)

    def _flood(self, w: PaneWatch, why: str) -> None:
        """Too much to parse (bytes or time): drop this pane's bytes and take tmux's own
        rendering every sweep instead (tmux parsed them already), until it is quiet."""
        w.flooding = True
        log.info("%s: flood (%s): its screen is read from tmux until it stops", w.info.pane_id, why)

    def _want_read(self, w: PaneWatch, now: float) -> None:
        """Pipe intake: this pane's screen changed; read it with the others at the next read."""
        w.unread = True
        if self._read_at is None:
            self._read_at = max(now + self.config.settle, self._last_read + self._read_gap)

    def _read_screens(self, now: float) -> None:
        """Pipe intake: read the screens of every pane that printed since its last read, as
        tmux renders them, in one round trip; then the blocked pre-check."""
        unread = self._take_unread(now)
        views = self.tmux.capture_views([w.info.pane_id for w in unread])
        self._early([w for w in unread if self._take_view(w, views.get(w.info.pane_id))])

    def _take_unread(self, now: float) -> list[PaneWatch]:
        """Pipe intake: the panes a read of screens is for, now that it happens."""
        self._read_at, self._last_read = None, now
        unread = [w for w in self.panes.values() if w.mode == "pipe" and w.unread]
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
        if view.report != w.info.report:  # a hook reported: re-combine at the next sweep
            w.info = dataclasses.replace(w.info, report=view.report)
            w.screen.dirty = True
        w.screen.resize(view.rows, view.cols)
        return w.screen.update(view.text, view.cursor_y, view.title)

    def _classify_due(self, now: float) -> None:
        """Emulate intake: the pre-check for panes whose bytes were parsed `settle` ago."""
        due = [pid for pid, at in self._due.items() if at <= now]
        for pid in due:
            del self._due[pid]
        self._early([self.panes[pid] for pid in due if pid in self.panes])

    def _early(self, changed: list[PaneWatch]) -> None:
        """Early classification of changed panes. Only a change into or out of `blocked` is
        published at once (that is what a person waits for); the rest waits for the sweep,
        so a busy pane does not cost a tmux call per classification."""
        batch = Batch()
        for w in changed:
            if not self._could_be_blocked(w):
                continue  # nothing that could start a prompt: the sweep has the rest
            self._classify(w)
            was = w.published.get("@agentstate")
            if (w.state and w.state.state == "blocked") != (was == "blocked"):
                self._publish_pane(w, batch)
        if batch:
            self._publish_aggregates(batch)
            self._apply(batch)

    def _could_be_blocked(self, w: PaneWatch) -> bool:
        """The cheap pre-check, on what changed since the last look only."""
        if w.state is not None and w.state.state == "blocked":
            return True  # an answered prompt must leave as fast as it came
        hint = w.manifest.blocked_hint
        return hint is None or hint.search(w.screen.take_changed_text()) is not None

    # -- the sweep -----------------------------------------------------------------------------
    def sweep(self) -> None:
        """Every `interval`: classify what changed and publish. The panes are listed from tmux
        (every pane, its size, report and whether a client shows it) only when something may
        have changed that the bytes and the process table cannot tell, or every
        `listing_every` seconds: each tmux command we send is kept in the user's
        `show-messages` log (1000 lines by default), so an idle sidecar must not fill it."""
        self.sweeps += 1
        now = time.monotonic()
        if self._reload.is_set() or self._listing_due(now):
            self._list_and_sweep()
            return
        if self._read_at is not None and self._read_at <= now:
            self._read_screens(now)  # pipe: a due read, sizes and titles with it
        self._settle()

    def _listing_due(self, now: float) -> bool:
        """Whether this sweep must list the panes from tmux: its time has come, or the process
        table says a pane came or went, an agent started or left (the tty's foreground
        changed), or a watched pane was resized (its tty's size)."""
        if self.config.intake == "capture" or now >= self._next_listing:
            return True
        if any(w.mode == "capture" for w in self.panes.values()):
            return True  # another program pipes one: its screen comes with the listing
        if self._server_pid and procs.child_pids(self._server_pid) != self._children:
            return True
        for pane_id, (pane_pid, key) in self._foregrounds.items():
            if (procs.foreground_key(pane_pid) or (0, b"")) != key:
                return True
        return any(procs.tty_size(w.info.tty) not in (None, (w.screen.lines, w.screen.columns))
                   for w in self.panes.values())

    def _list_and_sweep(self) -> None:
        self._watch_new_folders()
        if self._reload.is_set():
            self._reload.clear()
            for e in self.catalog.reload():
                log.error("manifest error (last good rules keep running): %s", e)
            self._identity.clear()
            for w in self.panes.values():
                w.screen.dirty = True
        # pipe panes that printed: a read of their screens that is due goes with this listing
        # (one round trip, not two); one not yet due stays set, as reading them twice cost
        # ~40 % more reads at 50 busy panes
        now = time.monotonic()
        read_due = self._read_at is not None and self._read_at <= now
        unread = self._take_unread(now) if read_due else []
        capture = [w.info.pane_id for w in self.panes.values() if w.mode == "capture"]
        capture += [w.info.pane_id for w in unread]
        # no list-clients here: who looks at which pane comes from list-panes (below); the
        # clients themselves are listed only to tell them something
        panes, _, screens = self.tmux.listing(capture, with_clients=False)
        # the capture intake ticks every capture_interval for its screens; processes and
        # session files are read once per interval, as with the pipe intake
        now = time.monotonic()
        full = self.config.intake != "capture" or now >= self._next_full
        if full:
            self._next_full = now + self.config.interval * 0.95
        batch = Batch()
        seen: set[str] = set()
        adopted: list[PaneWatch] = []
        for info in panes:
            seen.add(info.pane_id)
            manifest, pgid = self._identify(info, reread=full)
            w = self.panes.get(info.pane_id)
            if manifest is None:
                if w is not None:
                    self._drop(w, batch)
                elif info.state_option or info.our_pipe:  # left over from an earlier sidecar
                    self._clean_leftovers(info, batch)
                continue
            if w is not None and w.manifest is not manifest and w.manifest.name == manifest.name:
                w.manifest = manifest  # its file was edited (reloaded): the new rules apply
                w.screen.dirty = True
            if w is None or w.manifest.name != manifest.name or w.pgid != pgid:
                if w is not None:
                    self._drop(w, batch, unpublish=False)
                w = self._adopt(info, manifest, pgid, batch)
                adopted.append(w)
            else:
                if full:
                    self._read_session(w)
                # against the screen's size, not the last listing's: a read of screens may
                # have taken a size between two listings, and a resize back would go unseen
                if (info.height, info.width) != (w.screen.lines, w.screen.columns):
                    w.screen.resize(info.height, info.width)
                    if w.mode == "pipe" and info.pane_id not in screens:
                        # tmux reflowed it (unless read with this listing): the agent
                        # may print nothing
                        self._want_read(w, time.monotonic())
                    elif w.mode == "emulate":
                        # our screen does not reflow lines as tmux does: seed it again from
                        # tmux's rendering, below in this sweep
                        w.need_seed = True
                if info.report != w.info.report:
                    w.screen.dirty = True  # a new report: re-combine
                w.info = info
                if info.pane_id in screens:
                    w.screen.update(screens[info.pane_id], info.cursor_y, info.title)
            if w.piped and not w.need_seed and info.piped is False:
                self._pipe_taken(w, batch, "closed")
        wall = time.time()
        ours = self.tmux.control_session
        for info in panes:  # focusing a pane marks it seen: shown by a client of its session
            if (info.pane_id in self.panes and info.active and info.window_active
                    and info.attached - (info.session_id == ours) > 0):
                self.panes[info.pane_id].seen_at = wall
        for w in unread:
            if w.info.pane_id not in screens and w.info.pane_id in seen:
                self._want_read(w, time.monotonic())  # its capture failed: the next read
        for gone in set(self.panes) - seen:  # pane killed: tmux closed its pipe already
            self.intake.close(gone)
            del self.panes[gone]
            self._due.pop(gone, None)
        for gone in set(self._identity) - seen:
            del self._identity[gone]
            self._fg.pop(gone, None)
            self.notifier.forget(gone)
        children = procs.child_pids(self._server_pid) if self._server_pid else None
        self._check_pipes(children, batch)
        self._apply(batch)  # pipes first, so no byte is lost between the capture and the pipe
        self._foregrounds = {info.pane_id: (info.pane_pid, self._identity[info.pane_id][0])
                             for info in panes if info.pane_id in self._identity}
        self._children = children
        now = time.monotonic()
        self._next_listing = now + self.config.listing_every
        self._settle()

    def _check_pipes(self, children, batch: Batch) -> None:
        """A pane we pipe whose FIFO no process of the server writes any more: another
        program's `pipe-pane` replaced or closed ours (a `-o` toggle included). Never take the
        pane back: it is read from tmux's rendering from now on (capture mode)."""
        writing = procs.stdout_targets(children)
        settled = time.monotonic() - 1.0  # our own pipe's `cat` starts a moment after it is set
        for w in list(self.panes.values()):
            if (w.piped and not w.need_seed and not w.info.recording and w.piped_at < settled
                    and os.path.realpath(self.intake.path_for(w.info.pane_id)) not in writing):
                self._pipe_taken(w, batch, "replaced or closed")

    def _pipe_taken(self, w: PaneWatch, batch: Batch, how: str) -> None:
        log.info("%s (%s): our pipe was %s by another program; reading tmux's screen instead",
                 w.info.pane_id, w.info.address, how)
        w.mode = "capture"
        w.screen = CapturedScreen(w.info.height, w.info.width)
        w.need_seed = True  # a plain capture, this sweep
        w.flooding = False
        self.intake.close(w.info.pane_id)
        batch.set_pane(w.info.pane_id, "@agentstate_pipe", None)

    def _settle(self) -> None:
        """Seed, classify what changed, publish: the end of every sweep."""
        for fault in take_faults():  # a rule over the search budget, disabled: said once
            log.error("manifest rule %s", fault)
        batch = Batch()
        self._seed(batch)
        now = time.monotonic()
        for w in self.panes.values():
            w.window_bytes, w.window_parse = 0, 0.0
            if w.screen.dirty and self._worth_classifying(w, now):
                self._classify(w)
            self._publish_pane(w, batch)
        self._publish_aggregates(batch)
        self._apply(batch)
        self._write_status()

    def _worth_classifying(self, w: PaneWatch, now: float) -> bool:
        """The sweep classifies every changed screen; but the capture intake sweeps every
        tick: there a changed screen gets the cheap blocked pre-check, and a full
        classification only on a hit or once per `interval`."""
        if self.config.intake != "capture" or now - w.last_classified >= self.config.interval * 0.95:
            return True
        return self._could_be_blocked(w)

    def _identify(self, info: PaneInfo, reread: bool = True) -> tuple[Manifest | None, int]:
        if info.dead:
            return None, 0
        cached = self._identity.get(info.pane_id)
        if cached and not reread:
            return (self.catalog.get(cached[1]) if cached[1] else None), cached[0][0]
        key = procs.foreground_key(info.pane_pid) or (0, b"")
        if cached and cached[0] == key:
            return (self.catalog.get(cached[1]) if cached[1] else None), key[0]
        fg = procs.foreground(info.pane_pid)
        self._fg[info.pane_id] = fg
        manifest = self.catalog.for_foreground(fg)
        self._identity[info.pane_id] = (key, manifest.name if manifest else None)
        return manifest, key[0]

    def _adopt(self, info: PaneInfo, manifest: Manifest, pgid: int, batch: Batch) -> PaneWatch:
        kind = PaneScreen if self.config.intake == "emulate" else CapturedScreen
        screen = kind(info.height, info.width)
        w = PaneWatch(info, manifest, pgid, screen, mode=self.config.intake)
        w.fg = self._fg.get(info.pane_id)
        self._read_session(w)
        old = self.panes.get(info.pane_id)
        if old is not None:
            w.published, w.state, w.since = old.published, old.state, old.since
        self.panes[info.pane_id] = w
        self._attach(w, batch)
        log.info("%s (%s): %s in front, watching by %s", info.pane_id, info.address,
                 manifest.name, w.mode)
        return w

    def _attach(self, w: PaneWatch, batch: Batch) -> None:
        info = w.info
        if w.mode == "capture":
            return
        foreign = info.piped and not (info.our_pipe and info.our_pipe.startswith(str(self.runtime.dir)))
        if foreign and info.pane_id not in self.intake.watching():
            w.mode = "capture"  # never steal another plugin's pipe (tmux-logging…)
            w.screen = CapturedScreen(info.height, info.width)
            return
        if w.mode == "emulate":
            w.need_seed = True  # piped in the moment its screen is seeded (_seed)
            return
        fifo = self.intake.open(info.pane_id)
        batch.pipe_to_fifo(info.pane_id, str(fifo))
        w.piped_at = time.monotonic()

    def _seed(self, batch: Batch) -> None:
        """Screens that must come from tmux now: emulated panes that are new, resized or past
        a flood (with escapes, to go on parsing their bytes), and other new panes (plain)."""
        now = time.monotonic()
        want, fresh = [], []
        for w in self.panes.values():
            if w.flooding:  # every sweep: tmux's screen now, and parsing again once quiet
                w.need_seed = True
                w.flooding = now - w.last_byte < self.config.settle * 2
            if isinstance(w.screen, CapturedScreen):
                if w.need_seed:
                    fresh.append(w)
            elif w.need_seed:
                want.append(w)
        if fresh:
            screens = self.tmux.capture([w.info.pane_id for w in fresh], escapes=False)
            for w in fresh:
                if w.info.pane_id in screens:
                    w.screen.update(screens[w.info.pane_id], w.info.cursor_y, w.info.title)
                    w.need_seed = False
        if not want:
            return
        before = {}
        for w in want:  # a fresh FIFO, piped in the moment of the capture: it holds exactly
            # the bytes that come after it (what the old FIFO holds is in the capture)
            if w.flooding or w.info.recording:  # its bytes are dropped anyway, or `record`
                # has the pipe (teeing into our FIFO: kept; a byte printed between this drain
                # and the capture is parsed twice)
                self.intake.read(w.info.pane_id, PIPE_DRAIN)
                continue
            pipe = Batch()
            pipe.pipe_to_fifo(w.info.pane_id, str(self.intake.open(w.info.pane_id)))
            before[w.info.pane_id] = pipe.commands
            w.piped_at = now
        views = self.tmux.capture_views([w.info.pane_id for w in want], escapes=True, before=before)
        for w in want:
            view = views.get(w.info.pane_id)
            if view is not None:
                osc_state = w.screen.osc_state  # tmux keeps no trace of it
                w.screen = seeded_screen(view)
                w.screen.osc_state = osc_state
                w.need_seed = False

    # -- classify and publish --------------------------------------------------------------------
    def _classify(self, w: PaneWatch) -> None:
        now = time.monotonic()
        self._due.pop(w.info.pane_id, None)
        w.last_classified = now
        self.classifications += 1
        match = w.manifest.evaluate(w.screen.take_view())
        wall = time.time()
        if w.screen_state is None or match.state != w.screen_state:
            # first look counts as a change too: a report from before we watched this pane
            # (a restart) must not beat what the screen shows now; a newer report still does
            w.screen_changed_at = wall
        w.screen_state = match.state
        report = newest(Report.parse(w.info.report), w.session)
        new = combine(True, match, report, wall, self.config.report_lifetime, w.screen_changed_at)
        if new != w.state:
            if w.state is None or new is None or new.state != w.state.state:
                w.since = wall
                old = w.state.state if w.state else None
                if new and self.notifier.should_notify(w.info.pane_id, old, new.state, wall,
                                                       seen_at=w.seen_at):
                    self._notes.append((w, new.state, old))
                log.info("%s (%s) %s: %s → %s [%s] %s", w.info.pane_id, w.info.address,
                         w.manifest.name, w.state.state if w.state else "-",
                         new.state if new else "-", new.rule if new else "", new.detail if new else "")
            w.state = new

    def _publish_pane(self, w: PaneWatch, batch: Batch) -> None:
        st = w.state
        want = {
            "@agentstate": st.state if st else None,
            "@agentstate_agent": w.manifest.name if st else None,
            "@agentstate_since": str(int(w.since)) if st else None,
            "@agentstate_source": st.source if st else None,
            # the prompt line, for blocked only: a working row's timer would change every second
            "@agentstate_detail": (tmux_quote(_one_line(st.detail)[:DETAIL_MAX])
                                   if st.state == "blocked" else "") if st else None,
            # a client has shown the pane since its state last changed
            "@agentstate_seen": ("1" if (w.seen_at or 0) >= w.since else "0") if st else None,
        }
        for name, value in want.items():
            if w.published.get(name, "<unset>") != value:
                batch.set_pane(w.info.pane_id, name, value)
                w.published[name] = value

    def _unpublish(self, w: PaneWatch, batch: Batch) -> None:
        for name in PANE_OPTIONS:
            batch.set_pane(w.info.pane_id, name, None)
        if w.piped:
            batch.close_pipe(w.info.pane_id)

    def _drop(self, w: PaneWatch, batch: Batch, unpublish: bool = True) -> None:
        """The agent left this pane (the shell is back): stop watching, unset its options."""
        log.info("%s (%s): %s no longer in front", w.info.pane_id, w.info.address, w.manifest.name)
        if unpublish:
            self._unpublish(w, batch)
        elif w.piped:
            batch.close_pipe(w.info.pane_id)
        self.intake.close(w.info.pane_id)
        self.panes.pop(w.info.pane_id, None)
        self._due.pop(w.info.pane_id, None)

    def _clean_leftovers(self, info: PaneInfo, batch: Batch) -> None:
        for name in PANE_OPTIONS:
            batch.set_pane(info.pane_id, name, None)
        if info.our_pipe:
            if info.piped and info.our_pipe.startswith(str(self.runtime.dir)):
                batch.close_pipe(info.pane_id)
            else:
                batch.set_pane(info.pane_id, "@agentstate_pipe", None)

    def _publish_aggregates(self, batch: Batch) -> None:
        windows: dict[str, str] = {}
        counts = {s: 0 for s in URGENCY}
        for w in self.panes.values():
            if w.state is None:
                continue
            counts[w.state.state] += 1
            cur = windows.get(w.info.window_id)
            if cur is None or URGENCY[w.state.state] > URGENCY[cur]:
                windows[w.info.window_id] = w.state.state
        self._flush_notes(batch)
        # no refresh-client: tmux redraws every client's status line when an option is set
        for window, state in windows.items():
            if self._windows.get(window) != state:
                batch.set_window(window, "@agentstate_window", state)
        for window in set(self._windows) - set(windows):
            batch.set_window(window, "@agentstate_window", None)
        self._windows = windows
        summary = self.config.render_summary(counts)
        if summary != self._summary:
            batch.set_global("@agentstate_summary", summary)
            self._summary = summary

    def _read_session(self, w: PaneWatch) -> None:
        session = session_report(w.manifest, w.fg)
        if session != w.session:
            w.session = session
            w.screen.dirty = True  # re-combine at this sweep

    def _flush_notes(self, batch: Batch) -> None:
        """Tell the clients that are not looking at the pane; bell; the user's command."""
        if self._notes:
            try:
                self._clients = self.tmux.clients()
            except ServerGone:
                raise
            except TmuxError:
                self._clients = []
        for w, state, old in self._notes:
            if w.state is None or w.state.state != state:
                continue  # it changed again before we got here
            line = _one_line(w.state.detail)[:120]
            what = "needs you" if state == "blocked" else "finished its turn"
            text = tmux_quote(f"{w.manifest.display or w.manifest.name} in {w.info.address} {what}"
                              + (f": {line}" if line else ""))
            for c in self._clients:
                if c.control or c.pane_id == w.info.pane_id:
                    continue
                batch.add("display-message", "-c", c.name, "-d", "5000", text)
                if self.config.notify.bell:
                    ring(c.tty)
            self.notifier.run_command(w.info.pane_id, w.info.address, w.manifest.name, state, line)
            log.info("%s: notified (%s)", w.info.pane_id, state)
        self._notes.clear()

    def _apply(self, batch: Batch) -> None:
        if not batch:
            return
        try:
            self.tmux.apply(batch)
        except ServerGone:
            raise
        except TmuxError as e:
            # a pane or client vanished mid-batch: tmux stops at the failing command, so run
            # the rest one by one rather than lose every later update
            log.debug("batch failed (%s); retrying command by command", e)
            for cmd in batch.commands:
                try:
                    self.tmux.run(cmd)
                except TmuxError:
                    pass

    def _write_status(self) -> None:
        if self.sweeps % 5 != 1:
            return
        self.runtime.write_status({
            "socket": self.runtime.socket_path, "pid": os.getpid(), "updated": time.time(),
            "sweeps": self.sweeps,
            "classifications": self.classifications,
            "tmux_commands": self.tmux.commands_sent,
            "rule_faults": [f for name in self.catalog.names() for f in self.catalog.get(name).faults()],
            "panes": [{"pane": w.info.pane_id, "address": w.info.address, "agent": w.manifest.name,
                       "mode": w.mode, "state": w.state.state if w.state else None}
                      for w in self.panes.values()],
        })


def _one_line(text: str) -> str:
    return " ".join(text.split())
