"""Publishing: everything the sidecar tells tmux and the user. Pane options (what each pane
is in), window badges and the global summary (aggregates), notifications to the clients not
looking, and the status file `status` reads. Only from states and the user's own options:
pane text reaches tmux only quoted, in `@agentstate_detail` and a message."""
from __future__ import annotations

import logging
import os
import time
from typing import Callable

from .config import URGENCY, Config, in_own_style
from ..core.combine import OSC_OPTION, SCREEN_OPTION, osc_option, record_decides, screen_option
from ..core.hostproto import clean_text
from . import desktop
from .notify import Notifier, ring, write_tty
from .pane_rows import PaneRows
from .runtime import Runtime
from .status_file import StatusFile
from ..tmux import Batch, ClientInfo, PaneInfo, ServerGone, Tmux, TmuxError, tmux_quote
from .watch import PaneWatch, shown_state

# what the sidecar publishes on a pane (the contract; `stop --clean` and "watcher down" unset
# them all)
PUBLISHED_PANE_OPTIONS = ("@agentstate", "@agentstate_agent", "@agentstate_since",
                          "@agentstate_source", "@agentstate_detail", "@agentstate_seen",
                          "@agentstate_agent_version", "@agentstate_done",
                          "@agentstate_error", "@agentstate_context", "@agentstate_screen",
                          "@agentstate_via", "@agentstate_osc")

log = logging.getLogger("tmux_agentstate.sidecar")

DETAIL_MAX = 200
# a batch longer than this (a start with hundreds of panes) goes in two: what the status line
# shows (each pane's state, the window badges, the summary) first, the rest after it
FIRST_BATCH = 200
FIRST_OPTIONS = frozenset({"@agentstate", "@agentstate_window", "@agentstate_summary"})


def remote_key(host: str, pane: str) -> str:
    """A remote pane's name in the notifier's cooldowns: pane ids repeat across hosts."""
    return f"{pane}@{host}"


def count_remote(rows: list[dict], counts: dict[str, int]) -> tuple[int, int]:
    """Add the fresh remote rows to `counts` (by shown state); (on how many hosts, this one
    counted as one, the blocked panes are, 0 when none of them is remote; how many remote rows
    are stale). A stale row is not counted as its state: its host is silent, so that state is
    only the last one known (a blocked one may have been answered there); it is counted apart."""
    stale = 0
    blocked_on: set = {""} if counts.get("blocked") else set()  # "": this host
    for r in rows:
        state = "done" if r.get("state") == "idle" and r.get("done") else r.get("state")
        if r.get("stale"):
            stale += 1
        elif state in counts:
            counts[state] += 1
            if state == "blocked":
                blocked_on.add(r.get("host"))
    return (len(blocked_on) if blocked_on - {""} else 0), stale


def tell_remote(row: dict, clients: list[ClientInfo], notifier: Notifier, batch: Batch) -> None:
    """A remote pane's notification: its host named; its text (untrusted, from the host)
    cleaned and quoted as a local pane's is. Every client is told: none shows that pane (a
    local window attached to the host is a client of the host's tmux, told by its sidecar)."""
    notify = notifier.config
    host, state = clean_text(row["host"], 100), row["state"]
    line = one_line(clean_text(row.get("detail"), 200))[:120]
    agent = clean_text(row.get("agent"), 40)
    address = f"{host}:{clean_text(row.get('target'), 200)}"
    what = "needs you" if state == "blocked" else "finished its turn"
    title = f"{agent} on {address} {what}"
    text = tmux_quote(title + (f": {line}" if line else ""))
    for c in clients:
        if c.control:
            continue
        batch.add("display-message", "-c", c.name, "-d", "5000", text)
        if notify.bell:
            ring(c.tty)
        write_tty(c.tty, desktop.for_client(notify.terminal, c.termname, c.termtype, title, line))
    notifier.run_command(row["pane"], address, agent, state, line, host=host)
    log.info("%s on %s: notified (%s)", row["pane"], host, state)


def one_line(text: str) -> str:
    return " ".join(text.split())


def osc_record(w: PaneWatch, st) -> str | None:
    """`@agentstate_osc` for `w`: its root OSC record, children counted; None without one."""
    root = w.screen.status.root
    if st is None or root is None:
        return None
    return osc_option(root, w.screen.status.children_working(), record_decides(st))


def detail_line(st) -> str:
    """What `@agentstate_detail` says: a prompt's line, else a mark's row, else nothing."""
    return st.detail if st.state == "blocked" else st.mark_line


class Publisher:
    def __init__(self, tmux: Tmux, runtime: Runtime, config: Config):
        self.tmux = tmux
        self.runtime = runtime
        self.config = config
        self.notifier = Notifier(config.notify)
        self.rows_file = PaneRows(runtime.dir)  # what `stream` sends to other hosts' sidecars
        self._windows: dict[str, str] = {}   # window id → published @agentstate_window
        self._summary: str | None = None
        self._clients: list[ClientInfo] = []
        self._notes: list[tuple[PaneWatch, str, str | None]] = []  # (pane, state, old) to tell
        # every remote host's rows (the Sidecar sets its Hosts.rows): each a hostproto row +
        # "host" + "stale"; counted in the summary, told like local panes (remote_changes)
        self.remote_rows: Callable[[], list[dict]] = lambda: []
        self._remote_notes: list[dict] = []  # remote rows to tell at the next aggregates
        self.status_file = StatusFile(runtime, tmux)
        # the local panes' part of the aggregates, counted again only when a pane's options
        # changed (a sweep where nothing did costs no loop over the panes, no rows file)
        self._local_due, self._local_n = True, -1
        self._local_counts: dict[str, int] = {s: 0 for s in URGENCY}

    # -- panes ---------------------------------------------------------------------------------
    def pane(self, w: PaneWatch, batch: Batch) -> None:
        st = w.state
        want = {
            "@agentstate": st.state if st else None,
            "@agentstate_agent": w.manifest.name if st else None,
            "@agentstate_agent_version": (w.version or "") if st else None,
            "@agentstate_since": str(int(w.since)) if st else None,
            "@agentstate_source": st.source if st else None,
            # the screen rules' own verdict and when it last changed: a fresh look (`answer`,
            # `explain`) supersedes reports by it as this sidecar does (core/combine.py)
            SCREEN_OPTION: (screen_option(w.screen_state, w.screen_changed_at)
                            if st and w.screen_state else None),
            # the prompt line while blocked (a working row's timer would change every second),
            # else the row of the error a turn ended in (the manifest's marks)
            "@agentstate_detail": tmux_quote(one_line(detail_line(st))[:DETAIL_MAX]) if st else None,
            "@agentstate_error": st.mark if st else None,
            # percent of the context window in use, where the agent's own files tell it
            "@agentstate_context": str(w.context) if st and w.context is not None else None,
            # a client has shown the pane since its state last changed
            "@agentstate_seen": ("1" if (w.seen_at or 0) >= w.since else "0") if st else None,
            # its turn finished while no client showed it, and none has since (@agentstate
            # stays idle: the window badge and the summary say done)
            "@agentstate_done": ("1" if shown_state(w) == "done" else "0") if st else None,
            # the agent is on the far side of this client ("ssh", …), inferred from the screen
            "@agentstate_via": w.via if st and w.via else None,
            # the agent's own OSC 7501 record, whether it decided: `explain`, `send` and the
            # popup read no bytes
            OSC_OPTION: osc_record(w, st),
        }
        for name, value in want.items():
            if w.published.get(name, "<unset>") != value:
                batch.set_pane(w.pane_id, name, value)
                w.published[name] = value
                self._local_due = True

    def fresh(self, w: PaneWatch) -> None:
        """`w`'s pane has none of our options (no earlier sidecar left any): an option with
        nothing to say is not unset (each tmux command is a line in show-messages, and tmux
        refreshes every session's status and every client after each `set-option`)."""
        w.published = {name: None for name in PUBLISHED_PANE_OPTIONS}

    def unpublish(self, pane_id: str, batch: Batch) -> None:
        for name in PUBLISHED_PANE_OPTIONS:
            batch.set_pane(pane_id, name, None)
        self._local_due = True

    def clean_leftovers(self, info: PaneInfo, batch: Batch) -> None:
        """Options and a pipe an earlier sidecar left on a pane with no agent in front."""
        self.unpublish(info.pane_id, batch)
        if info.our_pipe:
            if info.piped and info.our_pipe.startswith(str(self.runtime.dir)):
                batch.close_pipe(info.pane_id)
            else:
                batch.set_pane(info.pane_id, "@agentstate_pipe", None)

    def note(self, w: PaneWatch, new: str, old: str | None, now: float) -> None:
        """`w` changed state: tell the user (at the next `aggregates`), if they want to know."""
        if self.notifier.should_notify(w.pane_id, old, new, now, seen_at=w.seen_at):
            self._notes.append((w, new, old))

    def forget(self, pane_id: str) -> None:
        self.notifier.forget(pane_id)
        self._local_due = True

    def remote_changes(self, transitions: list[tuple[dict, str | None]]) -> None:
        """Remote panes that changed state, (row, old state): told as local panes are (at the
        next `aggregates`), the cooldown kept per pane and host. A stale row is not: its host
        is silent, so its state is only the last one known."""
        now = time.time()
        for row, old in transitions:
            try:
                host, pane, new = row["host"], row["pane"], row["state"]
            except (KeyError, TypeError):
                continue
            if row.get("stale") or not (isinstance(host, str) and isinstance(pane, str)):
                continue
            if self.notifier.should_notify(remote_key(host, pane), old, new, now):
                self._remote_notes.append(row)

    def _remote(self) -> list[dict]:
        """The remote rows now; none when the links cannot say (the local view goes on)."""
        try:
            rows = self.remote_rows()
        except Exception:  # noqa: BLE001 - another part's fault must not stop the sweep
            log.exception("remote rows could not be read")
            return []
        return [r for r in rows if isinstance(r, dict)]

    # -- windows, summary, notifications ---------------------------------------------------------
    def aggregates(self, panes: list[PaneWatch], batch: Batch) -> None:
        if self._local_due or len(panes) != self._local_n:
            self._local_due, self._local_n = False, len(panes)
            self.status_file.panes_changed()
            self._local(panes, batch)
        elif self.rows_file.held:
            self.rows_file.update(panes, time.monotonic())  # a change held back, now due
        counts = dict(self._local_counts)
        blocked_hosts, stale = count_remote(self._remote(), counts)
        self._flush_notes(batch)
        summary = self.config.render_summary(counts, blocked_hosts, stale)
        fault = self.status_file.disk_fault
        if fault:  # the panes are still published; this says what is not
            mark = in_own_style(self.config.styles["blocked"], f" agentstate: {fault} ")
            summary = f"{summary} {mark}" if summary else mark
        if summary != self._summary:
            batch.set_global("@agentstate_summary", summary)
            self._summary = summary

    def _local(self, panes: list[PaneWatch], batch: Batch) -> None:
        """The local panes' counts, window badges and rows file."""
        self.rows_file.update(panes, time.monotonic())
        windows: dict[str, str] = {}
        counts = {s: 0 for s in URGENCY}
        for w in panes:
            state = shown_state(w)
            if state is None:
                continue
            counts[state] += 1
            cur = windows.get(w.info.window_id)
            if cur is None or URGENCY[state] > URGENCY[cur]:
                windows[w.info.window_id] = state
        # no refresh-client: tmux redraws every client's status line when an option is set
        for window, state in windows.items():
            if self._windows.get(window) != state:
                batch.set_window(window, "@agentstate_window", state)
        for window in set(self._windows) - set(windows):
            batch.set_window(window, "@agentstate_window", None)
        self._windows, self._local_counts = windows, counts

    def recount(self) -> None:
        """Count the local panes again at the next `aggregates` (a listing: a pane may have
        moved to another window)."""
        self._local_due = True

    def status_due(self, now: float) -> bool:
        return self.status_file.due(now)

    def _flush_notes(self, batch: Batch) -> None:
        """Tell the clients that are not looking at the pane; bell; the user's command."""
        if self._notes or self._remote_notes:
            try:
                self._clients = self.tmux.clients()
            except ServerGone:
                raise
            except TmuxError:
                self._clients = []
        notify = self.config.notify
        for w, state, old in self._notes:
            if w.state is None or w.state.state != state:
                continue  # it changed again before we got here
            line = one_line(w.state.detail if state == "blocked" else w.state.mark_line)[:120]
            what = "needs you" if state == "blocked" else "finished its turn"
            title = f"{w.manifest.display or w.manifest.name} in {w.info.address} {what}"
            text = tmux_quote(title + (f": {line}" if line else ""))
            for c in self._clients:
                if c.control or c.shows(w.info.window_id):
                    continue  # a client that has the pane on screen sees it already
                batch.add("display-message", "-c", c.name, "-d", "5000", text)
                if notify.bell:
                    ring(c.tty)
                write_tty(c.tty, desktop.for_client(notify.terminal, c.termname, c.termtype,
                                                    title, line))
            self.notifier.run_command(w.pane_id, w.info.address, w.manifest.name, state, line)
            log.info("%s: notified (%s)", w.pane_id, state)
        self._notes.clear()
        for row in self._remote_notes:
            tell_remote(row, self._clients, self.notifier, batch)
        self._remote_notes.clear()

    def withdraw(self, panes: list[PaneWatch], batch: Batch) -> None:
        """The sidecar stops: every option it set goes."""
        for w in panes:
            self.unpublish(w.pane_id, batch)
        for window in self._windows:
            batch.set_window(window, "@agentstate_window", None)
        batch.set_global("@agentstate_summary", None)

    # -- to tmux, and to the status file -------------------------------------------------------
    def apply(self, batch: Batch) -> None:
        if not batch:
            return
        if len(batch.commands) > FIRST_BATCH:  # many panes at once (a start): states first
            first = Batch()
            first.commands = [c for c in batch.commands if FIRST_OPTIONS & set(c)]
            rest = Batch()
            rest.commands = [c for c in batch.commands if not FIRST_OPTIONS & set(c)]
            if first and rest:
                self.apply(first)
                # the rest in parts: tmux answers other clients between two
                for at in range(0, len(rest.commands), FIRST_BATCH * 2):
                    part = Batch()
                    part.commands = rest.commands[at:at + FIRST_BATCH * 2]
                    self.apply(part)
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

    def status(self, panes: list[PaneWatch], counters: dict, rule_faults: list[str]) -> None:
        self.status_file.write(panes, counters, rule_faults)

    def recent_bytes(self, panes: list[PaneWatch]) -> None:
        """`report` asked (SIGUSR1): each watched pane's last bytes into the runtime folder
        (private, 0600), whole or not at all."""
        for w in panes:
            data = w.intake.recent(w)
            if not data:
                continue
            path = self.runtime.recent_path(w.pane_id)
            tmp = path.with_suffix(".tmp")
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                os.replace(tmp, path)
            except OSError as e:
                log.error("cannot write %s: %s", path, e)
