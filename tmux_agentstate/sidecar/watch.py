"""PaneWatch: what the sidecar keeps about one agent pane it watches."""
from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .. import procs
from ..hooks import context
from ..core import origin
from ..core.combine import (PaneState, Report, combine, newest, record_decides, report_in_force,
                            report_from_claude_session, screen_verdict_since)
from ..core.infer import Inference, without_tmux_status
from ..core.manifest import Manifest
from ..core.screen import CapturedScreen, PaneScreen, ScreenView
from ..tmux import PaneInfo

if TYPE_CHECKING:
    from .intakes.base import Intake

log = logging.getLogger("tmux_agentstate.sidecar")
REFUSALS_KEPT = 32  # tokens whose refusal was logged, per pane (a bound: anyone can set many)


@dataclass
class PaneWatch:
    info: PaneInfo
    manifest: Manifest
    pgid: int
    screen: PaneScreen | CapturedScreen
    intake: "Intake"                   # how its screen is known (see intakes/)
    state: PaneState | None = None
    since: float = 0.0
    last_classified: float = 0.0
    due: float | None = None           # when to pre-check it (its bytes changed the screen)
    need_seed: bool = True             # its screen must come from tmux at the next sweep
    published: dict = field(default_factory=dict)
    screen_state: str | None = None    # the screen rules' own verdict, last classification
    screen_changed_at: float = 0.0     # unix time that verdict last changed (0: unknown)
    session: Report | None = None      # Claude's session file, as a report
    status_serial: int = 0             # the screen's board serial at the last classification
    seen_at: float | None = None       # unix time a client last showed this pane
    shown: bool = False                # a client showed it at the last listing
    done_at: float | None = None       # unix time its turn finished while no client showed it;
                                       # None again once one does, or it leaves idle
    fg: procs.Foreground | None = None
    version: str | None = None         # the agent's release (procs.agent_version)
    context: int | None = None         # percent of its context window in use (hooks/context.py)
    context_file: str | None = None    # where that comes from
    context_mtime: float = 0.0
    context_found_at: float = 0.0      # when context_file was last looked for
    files_read_at: float = 0.0         # when its agent's files were last read (monotonic)
    # the FIFO intakes' own (pipe, emulate)
    piped_at: float = 0.0              # when our pipe was last set on it (monotonic)
    last_byte: float = 0.0
    unread: bool = False               # pipe: bytes came since its screen was last read
    window_bytes: int = 0              # emulate: bytes parsed since the last sweep
    window_parse: float = 0.0          # emulate: seconds spent parsing them
    flooding: bool = False             # emulate: over budget, bytes are read and dropped
    printing_since: float = 0.0        # when its bytes started to come without a pause
    handoff: bool = False              # it printed on and on: its pipe is handed to us
                                       # (handoff.py), no `cat` between
    refused: set = field(default_factory=set)  # report tokens whose refusal was logged
    # monotonic time the report in force at the last classification goes stale: classified
    # again then, even if nothing else happens to the pane (a hook that never fires again)
    report_stale_at: float | None = None
    # the state an earlier sidecar left on the pane (a restart, an update's hand-over): the
    # first classification's "before", so a prompt already announced is not announced again
    inherited: str | None = None
    # an SSH-like client in front (core/tunnels.py: "ssh", "mosh", …): the agent on the far
    # side is inferred from the screen (core/infer.py); `manifest` is the one adopted, or
    # NO_AGENT, and nothing is published until one is
    via: str | None = None
    inference: Inference | None = None

    @property
    def pane_id(self) -> str:
        return self.info.pane_id


# the manifest of a tunnel pane with no agent adopted: no rule, never classified
NO_AGENT = Manifest(name="", path="")


def inferring(w: PaneWatch) -> bool:
    """A tunnel pane whose agent is not (yet, or any more) adopted."""
    return w.via is not None and w.manifest is NO_AGENT


def rules_view(w: PaneWatch, view: ScreenView) -> ScreenView:
    """What the rules read: through a tunnel, a nested tmux's status line taken out."""
    return without_tmux_status(view) if w.via is not None else view


def infer_agent(w: PaneWatch, manifests: dict[str, Manifest], now: float) -> bool:
    """One look at a tunnel pane's screen (every sweep: time alone adopts or drops); the agent
    adopted becomes its manifest. True when that changed (adopted, replaced, dropped)."""
    w.inference.look(manifests.values(), rules_view(w, w.screen.view()), now)
    adopted = w.inference.adopted
    manifest = manifests.get(adopted.name, NO_AGENT) if adopted else NO_AGENT
    if manifest is w.manifest:
        return False
    if manifest is NO_AGENT:
        log.info("%s (%s): no agent seen through %s for %gs: %s dropped", w.pane_id,
                 w.info.address, w.via, w.inference.drop, w.manifest.name)
        w.state, w.screen_state, w.screen_changed_at, w.inference.adopted = None, None, 0.0, None
        w.screen.status.clear()  # the agent that reported is gone from the far side
    else:
        log.info("%s (%s): %s inferred from the screen through %s", w.pane_id, w.info.address,
                 manifest.name, w.via)
    w.manifest, w.screen.dirty = manifest, True
    return True


def new_watch(info: PaneInfo, manifest: Manifest, pgid: int, intake: "Intake",
              fg: procs.Foreground | None, old: PaneWatch | None, via: str | None) -> PaneWatch:
    """The watch of a pane whose agent (or tunnel) just came in front; what it had published
    and been shown carries over from `old` (the same pane's last watch)."""
    w = PaneWatch(info, manifest, pgid, intake.new_screen(info), intake,
                  inherited=info.state_option or None)  # what an earlier sidecar left
    w.fg, w.via = fg, via
    if via:
        w.inference = Inference()
    else:
        w.version = procs.agent_version(fg)  # once per agent process: its package's metadata
    read_agent_files(w)
    if old is not None:
        w.published, w.state, w.since = old.published, old.state, old.since
        w.seen_at, w.shown, w.done_at = old.seen_at, old.shown, old.done_at
    return w


def could_be_blocked(w: PaneWatch) -> bool:
    """The cheap pre-check, on what changed since the last look only: could the screen now
    hold a prompt (the manifest's blocked patterns)?"""
    if inferring(w):
        return False  # no agent yet: the sweep looks (infer_agent)
    if w.state is not None and w.state.state == "blocked":
        return True  # an answered prompt must leave as fast as it came
    hint = w.manifest.blocked_hint
    return hint is None or hint.search(w.screen.take_changed_text()) is not None


def classify(w: PaneWatch, report_lifetime: float) -> tuple[PaneState | None, PaneState | None] | None:
    """Screen → the manifest's rules → combined with the reports: `w.state`. Returns (old,
    new) if the state itself changed (not only its detail), else None."""
    w.due = None
    w.last_classified = time.monotonic()
    view = w.screen.take_view()
    if inferring(w):
        return None  # nothing to classify until an agent is adopted (infer_agent)
    match = w.manifest.evaluate(rules_view(w, view))
    wall = time.time()
    # first look counts as a change too: a report from before we watched this pane (a
    # restart) must not beat what the screen shows now; a newer report still does
    w.screen_changed_at = screen_verdict_since(w.screen_state, w.screen_changed_at, match.state, wall)
    w.screen_state = match.state
    # a local hook or session file says nothing of an agent on the far side of a tunnel (its
    # OSC reports come through the tunnel in its own bytes: they do)
    report = newest(hook_report(w), w.session) if w.via is None else None
    board = w.screen.status
    record_news, w.status_serial = board.serial != w.status_serial, board.serial
    new = combine(True, match, report, wall, report_lifetime, w.screen_changed_at, board.root)
    w.report_stale_at = (w.last_classified + report.at + report_lifetime - wall
                         if report_in_force(report, wall, w.screen_changed_at, report_lifetime)
                         else None)
    # the agent said its turn is done: done while unseen, even if no sweep saw it working
    said_done = (record_news and record_decides(new) and board.root is not None
                 and board.root.status.state == "done")
    old, w.state = w.state, new
    if new == old or not (old is None or new is None or new.state != old.state):
        if said_done and not w.shown:
            w.done_at = wall
        return None
    w.since = wall
    finished = said_done or (old is not None and old.state == "working" and new is not None
                             and new.state == "idle")
    w.done_at = wall if finished and not w.shown else None
    return old, new


def record_changed(w: PaneWatch) -> bool:
    """The agent's root OSC record changed since the pane was last classified."""
    return w.screen.status.serial != w.status_serial


def hook_report(w: PaneWatch) -> Report | None:
    """The pane's hook report, if it proves it comes from the agent launched there
    (core/origin.py); a refused one is said in the log once per pane and token."""
    why = origin.refusal(w.info.report, w.info.launch)
    if why is None:
        return origin.proven(Report.parse(w.info.report), w.info.report, w.info.launch)
    token = origin.report_token(w.info.report)
    if token not in w.refused:
        if len(w.refused) >= REFUSALS_KEPT:
            w.refused.clear()
        w.refused.add(token)
        log.warning("%s (%s): %s", w.pane_id, w.info.address, why)
    return None


def relisted(w: PaneWatch, info: PaneInfo, screens: dict[str, str], full: bool) -> None:
    """A watched pane listed again: its agent's files (once per interval), its intake's part
    of the listing, a new report (or its proof) re-combined, tmux's screen where one was read."""
    if full:
        read_agent_files(w)
    w.intake.listed(w, info, screens)
    if (info.report, info.launch) != (w.info.report, w.info.launch):
        w.screen.dirty = True
    w.info = info
    if info.pane_id in screens:
        w.screen.update(screens[info.pane_id], info.cursor_y, info.title)


def mark_shown(panes: dict[str, PaneWatch], infos: list[PaneInfo], ours: str | None,
               wall: float) -> None:
    """Who shows which pane, from a listing: a pane is shown when it is the active pane of its
    session's current window and a client (not our control client) is attached to that
    session. Shown, it is seen: a "done" turn is done no more."""
    for info in infos:
        w = panes.get(info.pane_id)
        if w is None:
            continue
        w.shown = (info.active and info.window_active
                   and info.attached - (info.session_id == ours) > 0)
        if w.shown:
            w.seen_at, w.done_at = wall, None


def shown_state(w: PaneWatch) -> str | None:
    """What its badge and the summary show: its state, or `done` for an idle pane whose turn
    finished unseen."""
    if w.state is None:
        return None
    return "done" if w.done_at is not None and w.state.state == "idle" else w.state.state


CONTEXT_AGENTS = ("claude", "codex")
CONTEXT_REFIND = 30.0  # a Codex rollout is looked for again this often (a glob of its folder)


def read_context(w: PaneWatch) -> None:
    """The context usage from the agent's own file, read again only when the file changed.
    Claude's file is found again each time (a cheap read; /clear starts another session)."""
    name = w.manifest.name
    if name not in CONTEXT_AGENTS:
        return
    now = time.monotonic()
    if name == "claude" or w.context_file is None or now - w.context_found_at > CONTEXT_REFIND:
        w.context_file, w.context_found_at = context.context_file(name, w.fg), now
    if w.context_file is None:
        w.context = None
        return
    try:
        mtime = os.stat(w.context_file).st_mtime
    except OSError:
        w.context_file = w.context = None
        return
    if mtime != w.context_mtime:
        w.context, w.context_mtime = context.context_percent(name, w.context_file), mtime


def session_report(manifest: Manifest | None, fg: procs.Foreground | None) -> Report | None:
    """The agent's own session file as a report (Claude Code only, so far)."""
    if manifest is None or manifest.name != "claude" or fg is None:
        return None
    found = procs.claude_session(fg)
    return report_from_claude_session(*found) if found else None


def read_session(w: PaneWatch) -> None:
    """The agent's own session file (Claude's), as a report beside the hooks'."""
    session = session_report(w.manifest, w.fg)
    if session != w.session:
        w.session = session
        w.screen.dirty = True  # re-combine at this sweep


def read_agent_files(w: PaneWatch) -> None:
    """What the agent's own files say: its session file (a report), its context in use.
    Through a tunnel its files are on the far side: none."""
    if w.via is not None:
        return
    read_session(w)
    read_context(w)
