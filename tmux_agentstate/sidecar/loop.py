"""The sidecar's loop: one per tmux server. Watches agent panes, classifies, publishes.

    intake (screens) → screen → manifest (rules) → combine (with reports) → publish

The intake (intakes/) knows how screens come: it waits for bytes and says which screens
changed. A pane whose changed rows could hold a prompt (its manifest's blocked patterns, a
cheap pre-check) is classified at once, and only a change into or out of `blocked`, or of the
agent's own OSC report, is published at once; every `period` a sweep re-reads panes,
processes and reports, classifies what changed and publishes (publish.py), in one batch. A
hook report or a change of Claude's session file rings the doorbell (doorbell.py), which every
intake's wait also wakes on: those panes are read, classified and published at once (rings.py).
"""
from __future__ import annotations

import logging
import signal
import threading
import time

from ..core.catalog import Catalog
from ..core.manifest import Manifest, take_faults
from ..tmux import Batch, PaneInfo, ServerGone, Tmux, TmuxError
from .config import Config
from .hosts.follow import RemoteHosts
from .identity import Identities
from . import install
from .intakes import CaptureIntake, EmulateIntake, Intake, PipeIntake
from .intakes.base import COALESCE
from .manifests import ManifestWatch
from .publish import Publisher
from .rings import Rings
from .runtime import Runtime
from .update_check import UpdateCheck
from . import listing, pace
from .rechecks import Rechecks
from .watch import (PaneWatch, classify, could_be_blocked, infer_agent, new_watch,
                    read_agent_files, record_changed)

log = logging.getLogger("tmux_agentstate.sidecar")


def make_intakes(tmux: Tmux, config: Config, panes: dict,
                 runtime: Runtime) -> tuple[Intake, Intake]:
    """The intake the user chose (`@agentstate-intake`), and the one that reads a pane another
    program pipes: tmux's rendering, with every listing (the chosen one when it is capture)."""
    if config.intake == "capture":
        chosen = CaptureIntake(tmux, config, panes)
        return chosen, chosen
    kind = PipeIntake if config.intake == "pipe" else EmulateIntake
    return kind(tmux, config, panes, runtime.dir), CaptureIntake(tmux, config, panes, chosen=False)


def start_beside(s: "Sidecar") -> None:
    """What runs beside the loop, started with it: the signals' handlers, the manifest watch,
    update checks, the control client and the links to remote hosts (before any command, so
    the control client's first connect subscribes to their options)."""
    signal.signal(signal.SIGTERM, s.stop)
    signal.signal(signal.SIGINT, s.stop)
    signal.signal(signal.SIGHUP, lambda *_: s.manifests.reload_soon())
    signal.signal(signal.SIGUSR1, lambda *_: s._recent_asked.set())  # `report`
    s.manifests.start()
    s.update_check.start()
    s.tmux.use_control()
    s.remote.start()
    s.rings.start()  # the doorbell: hook reports and session files answered at once


class Sidecar:
    def __init__(self, tmux: Tmux, runtime: Runtime, catalog: Catalog | None = None,
                 config: Config | None = None):
        self.tmux = tmux
        self.runtime = runtime
        self.catalog = catalog or Catalog()
        self.config = config or Config()
        self.panes: dict[str, PaneWatch] = {}
        self.intake, self.fallback = make_intakes(tmux, self.config, self.panes, runtime)
        self.intakes = [self.intake] + ([self.fallback] if self.fallback is not self.intake else [])
        self.publish = Publisher(tmux, runtime, self.config)
        self.install = install.HandOver(runtime)  # our own install: hand over when it changes
        self.manifests = ManifestWatch(self.catalog, held=lambda: self.install.changing)
        self.update_check = UpdateCheck(self.config.manifest_check, self.config.manifest_url)
        self.identities = Identities(self.catalog)
        self.rechecks = Rechecks()
        self.to_publish: set[str] = set()  # panes to publish at the end of this sweep
        self.files_due: dict[str, float] = {}  # panes whose agent's files to read again, when
        self._lost_pipes_children = None   # the server's children when pipes were last checked
        self._writing: dict[str, int] = {}  # what those children write (their stdout)
        self.remote = RemoteHosts(tmux, runtime.dir, self.config, self.publish)  # hosts/
        self._stop = threading.Event()
        self._recent_asked = threading.Event()
        self._next_full = 0.0
        self._next_listing = 0.0             # when the sweep lists panes from tmux again
        self.sweeps = 0
        self.quiet = 0  # sweeps in a row that found nothing to do (pace.py)
        self.news_key: tuple = (None, None)  # the control client waited on (pace.hear_news)
        self.classifications = 0
        self.rings = Rings(self)  # rings.py

    # -- lifecycle ---------------------------------------------------------------------------
    def stop(self, *_):
        self._stop.set()

    def run(self) -> None:
        start_beside(self)
        server_gone = False
        handover: str | None = None  # a new install's interpreter: hand over to it
        try:
            self.identities.server_pid = self.tmux.server_pid()
            badge = Batch()  # the window badge's format, from the user's icons and styles
            badge.set_global("@agentstate_badge", self.config.badge_format())
            self.publish.apply(badge)
            next_sweep = time.monotonic()
            while not self._stop.is_set():
                if self._recent_asked.is_set():
                    self._recent_asked.clear()
                    self.publish.recent_bytes(list(self.panes.values()))
                now = time.monotonic()
                handover = self.install.due(now, self._stop.is_set)  # our install changed
                if handover:
                    break
                if now >= next_sweep and not self.intake.holds_sweep(now):
                    self.sweep()
                    next_sweep = now + pace.period(self)
                    continue
                pace.hear_news(self)
                wake = self.intake.wait(next_sweep)
                if wake.changed:
                    self._early(wake.changed)
                if wake.rung:
                    self.rings.answer()
                if wake.changed or wake.rung or wake.coalesce:
                    self.quiet = 0
                if self.intake.take_news():  # a listing at once (the sweep reads the news)
                    next_sweep = time.monotonic()
                if wake.coalesce:
                    # this adds at most COALESCE to any latency
                    time.sleep(COALESCE)
        except ServerGone:
            log.info("tmux server is gone; exiting")
            server_gone = True
        finally:
            if handover:
                self.install.run(self, handover)
            else:
                self.shutdown()
        if server_gone:
            self.runtime.remove()  # its FIFOs, lock, log and status have no server to serve

    def shutdown(self, withdraw: bool = True) -> None:
        self.remote.stop()  # every host's ssh killed
        self.rings.stop()
        self.manifests.stop()
        self.update_check.stop()
        batch = Batch()
        panes = list(self.panes.values())
        if withdraw:
            self.publish.withdraw(panes, batch)
        for w in panes:
            w.intake.detach(w, batch)
        try:
            self.tmux.apply(batch)
        except TmuxError:
            pass
        self.tmux.close()
        for intake in self.intakes:
            intake.close()
        self.panes.clear()

    # -- early: a screen changed -------------------------------------------------------------
    def _early(self, changed: list[PaneWatch]) -> None:
        """Early classification of changed panes. Only a change into or out of `blocked`, or
        of the agent's own OSC report, is published at once (what a person waits for; what the
        agent said itself); the rest waits for the sweep, so a busy pane does not cost a tmux
        call per classification."""
        batch = Batch()
        for w in changed:
            reported = record_changed(w)  # the agent's own word: published at once
            if not (could_be_blocked(w) or reported):
                continue  # nothing that could start a prompt: the sweep has the rest
            self._classify(w)
            was = w.published.get("@agentstate")
            if reported or (w.state and w.state.state == "blocked") != (was == "blocked"):
                self.publish.pane(w, batch)
        if batch:
            self.publish.aggregates(list(self.panes.values()), batch)
            self.publish.apply(batch)

    # -- the sweep -----------------------------------------------------------------------------
    def sweep(self) -> None:
        """Every `period`: classify what changed and publish. The panes are listed from tmux
        (every pane, its size, report and whether a client shows it) only when something may
        have changed that the bytes and the process table cannot tell, or every
        `listing_every` seconds: each tmux command we send is kept in the user's
        `show-messages` log (1000 lines by default), so an idle sidecar must not fill it."""
        self.sweeps += 1
        now = time.monotonic()
        if self.manifests.reload_due() or pace.listing_due(self, now):
            self._list_and_sweep()
            return
        changed = [w for intake in self.intakes for w in intake.sweep_read(now)]
        if changed:
            self._early(changed)
        self._settle()

    def _list_and_sweep(self) -> None:
        listing.list_and_sweep(self)

    def _settle(self) -> None:
        """Seed, classify what changed, publish what may have changed: the end of every sweep.
        A pane nothing happened to costs an attribute test or two (no tmux, no /proc)."""
        for fault in take_faults():  # a rule over the search budget, disabled: said once
            log.error("manifest rule %s", fault)
        for intake in self.intakes:
            intake.seed()
        batch = Batch()
        now = time.monotonic()
        panes = list(self.panes.values())
        for w in panes:
            if (w.via and infer_agent(w, self.catalog.by_name, now)) or (  # adopted, dropped
                    w.screen.dirty and w.intake.worth_classifying(w, now)) or (
                    w.report_stale_at is not None and now >= w.report_stale_at):
                self._classify(w)
        for pane_id in self.to_publish:
            w = self.panes.get(pane_id)
            if w is not None:
                self.publish.pane(w, batch)
        self.to_publish.clear()
        self.remote.settle()  # the options followed; remote state changes told
        self.publish.aggregates(panes, batch)
        self.publish.apply(batch)
        wall = time.monotonic()
        if self.install.status_due(wall) or self.publish.status_due(wall):
            self.publish.status(panes, {"sweeps": self.sweeps,
                                        "classifications": self.classifications,
                                        "rings": self.rings.answered,
                                        **self.install.status(self.intake.period)},
                                self.manifests.faults())

    # -- panes coming and going ------------------------------------------------------------------
    def _adopt(self, info: PaneInfo, manifest: Manifest, pgid: int, batch: Batch,
               via: str | None = None) -> None:
        old = self.panes.get(info.pane_id)
        w = new_watch(info, manifest, pgid, self.intake, self.identities.foreground(info.pane_id),
                      old, via)
        if old is None and not (info.state_option or info.our_pipe):
            self.publish.fresh(w)  # no earlier sidecar's options on it
        self.panes[info.pane_id] = w
        if not self.intake.attach(w, batch):
            self.fallback.take(w)  # another program pipes it: never steal its pipe
        w.intake.seed_soon(w)
        log.info("%s (%s): %s in front, watching by %s", info.pane_id, info.address,
                 via or manifest.name, w.intake.name)

    def _drop(self, w: PaneWatch, batch: Batch, unpublish: bool = True) -> None:
        """The agent left this pane (the shell is back): stop watching, unset its options."""
        log.info("%s (%s): %s no longer in front", w.pane_id, w.info.address, w.manifest.name)
        if unpublish:
            self.publish.unpublish(w.pane_id, batch)
        w.intake.detach(w, batch)
        self.panes.pop(w.pane_id, None)

    # -- classify ----------------------------------------------------------------------------------
    def _classify(self, w: PaneWatch) -> None:
        self.classifications += 1
        self.quiet = 0
        self.to_publish.add(w.pane_id)  # published at the end of this sweep, if not before
        change = classify(w, self.config.report_lifetime)
        if change is None:
            return
        old, new = change
        before, w.inherited = old.state if old else w.inherited, None
        if new is not None and new.state != "working":
            # a turn that ended wrote its usage (the context in use): read now, and again a
            # moment later (the agent may write its transcript just after its screen says so)
            read_agent_files(w)
            self.files_due[w.pane_id] = time.monotonic() + pace.FILES_AGAIN
        if new:
            self.publish.note(w, new.state, before, w.since)
        # the rule, not the prompt line: no pane text in a log that may outlive its server
        log.info("%s (%s) %s: %s → %s [%s]", w.pane_id, w.info.address, w.manifest.name,
                 before or "-", new.state if new else "-", new.rule if new else "")
