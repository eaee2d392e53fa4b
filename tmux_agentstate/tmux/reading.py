"""Reading panes: the listing (every pane, client and some screens in one round trip), screens
with their cursor and size of the same moment, the agent panes, a target resolved strictly.
A part of `Tmux` (server.py), which runs the commands."""
from __future__ import annotations

import re

from .errors import ServerGone, TmuxError
from .objects import (_MARKER, CLIENT_FORMAT, PANE_FIELDS, SEP, VIEW_FIELDS, ClientInfo,
                      PaneInfo, PaneView, _client_row, _views)


class Reading:
    def panes_and_clients(self) -> tuple[list[PaneInfo], list[ClientInfo]]:
        """All panes and clients in one round trip (see `listing` to capture screens too)."""
        panes, clients, _ = self.listing()
        return panes, clients

    def listing(self, capture: list[str] = (), with_clients: bool = True
                ) -> tuple[list[PaneInfo], list[ClientInfo], dict[str, str]]:
        """All panes, all clients (unless not wanted: a command less), and the plain text
        screens (`capture-pane -p`, as tmux itself renders them) of the `capture` panes: one
        round trip."""
        pfmt = SEP.join(f"#{{{f}}}" for f in PANE_FIELDS)
        cmds = [["list-panes", "-a", "-F", pfmt]]
        if with_clients:
            cmds.append(["list-clients", "-F", CLIENT_FORMAT])
        try:
            lines, screens = self._run_with_captures(cmds, capture, escapes=False)
        except ServerGone:
            raise
        except TmuxError:
            if not capture:
                raise
            # a captured pane vanished since the last listing: list now, capture next time
            return (*self.listing((), with_clients)[:2], {})
        panes, clients = [], []
        for line in lines:
            parts = line.split(SEP)
            client = _client_row(line)
            if client is not None:
                clients.append(client)
            elif len(parts) >= len(PANE_FIELDS):
                p = parts[: len(PANE_FIELDS) - 1] + [SEP.join(parts[len(PANE_FIELDS) - 1:])]
                try:
                    panes.append(PaneInfo(p[0], int(p[1]), p[2], p[3], p[4], p[5], p[6], int(p[7]),
                                          int(p[8]), p[9] == "1", p[10] == "1", p[11] == "1",
                                          int(p[12] or 0), int(p[13] or 0), p[14] == "1",
                                          p[15] == "1", int(p[16] or 0), p[17], p[18], p[19],
                                          p[20] != "", p[21], p[23], p[22]))
                except ValueError:
                    continue
        return panes, clients, screens

    def _run_with_captures(self, cmds: list[list[str]], pane_ids, escapes: bool):
        """Run `cmds`, then capture each pane, in one round trip: (lines of `cmds`, {pane:
        screen}). The control client answers command by command; a tmux process prints one
        stream, so there each capture is preceded by a marker line."""
        cmds, pane_ids = list(cmds), list(pane_ids)
        flag = ["-e"] if escapes else []
        if self.control is not None:
            outs = self._run_control(cmds + [["capture-pane", "-p", *flag, "-t", p] for p in pane_ids])
            if outs is not None:
                lines = [line for out in outs[:len(cmds)] if out for line in out.split("\n")]
                return lines, dict(zip(pane_ids, outs[len(cmds):]))
        for i, pid in enumerate(pane_ids):
            # the marker carries an index, not the pane id: display-message runs its text
            # through strftime, where "%3" becomes " %3" (a field width)
            cmds.append(["display-message", "-p", "-t", pid, f"{_MARKER}{i}"])
            cmds.append(["capture-pane", "-p", *flag, "-t", pid])
        lines, screens, current = [], {}, None
        for line in self.run(*cmds):
            if line.startswith(_MARKER):
                i = line[len(_MARKER):]
                pid = pane_ids[int(i)] if i.isdigit() and int(i) < len(pane_ids) else i
                current = screens.setdefault(pid, [])
            elif current is not None:
                current.append(line)
            else:
                lines.append(line)
        return lines, {k: "\n".join(v) for k, v in screens.items()}

    def pane_reports(self, pane_ids) -> dict[str, tuple[str, str]]:
        """{pane: (@agentstate_report, @agentstate_launch)} of these panes (the ones that are
        still there), in ONE command whatever their number: a `list-panes -a` of three fields
        (a display-message per pane would be a command, and a line in the user's
        `show-messages`, each)."""
        wanted = set(pane_ids)
        if not wanted:
            return {}
        fmt = SEP.join(f"#{{{f}}}" for f in ("pane_id", "@agentstate_report", "@agentstate_launch"))
        out = {}
        for line in self.run(["list-panes", "-a", "-F", fmt]):
            parts = line.split(SEP, 2)
            if len(parts) == 3 and parts[0] in wanted:
                out[parts[0]] = (parts[1], parts[2])
        return out

    def capture(self, pane_ids: list[str], escapes: bool = True) -> dict[str, str]:
        """Visible screens (`capture-pane -p`, with `-e` escapes by default), one call."""
        return self._captures(pane_ids, escapes)[1]

    def capture_views(self, pane_ids: list[str], escapes: bool = False,
                      before: dict[str, list[list[str]]] | None = None) -> dict[str, PaneView]:
        """Screens as tmux renders them, each with its cursor, title, size and modes as of the
        same moment: one round trip. A pane that is gone is left out. The sizes come from one
        `list-panes` ahead of the captures (tmux runs a line's commands without reading any
        pane in between), not a `display-message` per pane: half the commands.
        `before` {pane: commands}: run in the same moment, ahead of the captures: a
        `pipe-pane` there gets exactly the bytes that come after its capture (a seeded screen
        goes on from there: no byte parsed twice, none missed)."""
        before = before or {}
        fmt = SEP.join(f"#{{{f}}}" for f in ("pane_id",) + VIEW_FIELDS)

        def commands(ids):
            return [c for p in ids for c in before.get(p, ())] + [["list-panes", "-a", "-F", fmt]]

        try:
            return _views(*self._run_with_captures(commands(pane_ids), pane_ids, escapes))
        except ServerGone:
            raise
        except TmuxError:  # a pane vanished between list and capture: one by one
            out = {}
            for pid in pane_ids:
                try:
                    out.update(_views(*self._run_with_captures(commands([pid]), [pid], escapes)))
                except ServerGone:
                    raise
                except TmuxError:
                    continue
            return out

    def _captures(self, pane_ids: list[str], escapes: bool,
                  cmds: list[list[str]] = ()) -> tuple[list[str], dict[str, str]]:
        """(lines of `cmds`, {pane: screen}) in one round trip."""
        if not pane_ids:
            return [], {}
        try:
            lines, screens = self._run_with_captures(cmds, pane_ids, escapes)
        except ServerGone:
            raise
        except TmuxError:  # a pane vanished between list and capture: capture one by one
            lines, screens = self.run(*cmds), {}
            for pid in pane_ids:
                try:
                    screens.update(self._run_with_captures([], [pid], escapes)[1])
                except TmuxError:
                    continue
        return lines, screens

    def capture_one(self, pane_id: str, escapes: bool = True) -> dict[str, str]:
        return {pane_id: "\n".join(self.run(["capture-pane", "-p", *(["-e"] if escapes else []),
                                               "-t", pane_id]))}

    def agent_panes(self) -> list[dict]:
        """Panes that carry a state, with what `list` and the popup show."""
        fields = ("pane_id", "session_name", "window_index", "pane_index", "@agentstate",
                  "@agentstate_agent", "@agentstate_since", "@agentstate_source", "window_name",
                  "@agentstate_agent_version", "@agentstate_done", "@agentstate_error",
                  "@agentstate_context", "@agentstate_via", "@agentstate_osc",
                  "@agentstate_detail")  # the detail last: it may hold the separator
        fmt = SEP.join(f"#{{{f}}}" for f in fields)
        rows = []
        for line in self.run(["list-panes", "-a", "-F", fmt]):
            p = line.split(SEP)
            if len(p) < len(fields) or not p[4]:
                continue
            rows.append({"pane": p[0], "target": f"{p[1]}:{p[2]}.{p[3]}", "session": p[1],
                         "window": p[2], "state": p[4], "agent": p[5],
                         "since": int(p[6]) if p[6].isdigit() else None, "source": p[7],
                         "window_name": p[8], "agent_version": p[9] or None,
                         "done": p[10] == "1", "error": p[11] or None,
                         "context": int(p[12]) if p[12].isdigit() else None,
                         # an ssh pane's (or mosh, docker…): the agent is on the far side
                         "via": p[13] or None,
                         # the agent's own OSC record (core/combine.py: osc_option), as set
                         "osc": p[14],
                         # stored with '#' doubled for status lines; give the text back
                         "detail": SEP.join(p[15:]).replace("##", "#")})
        return rows

    def client_pane(self, client: str) -> str | None:
        """The pane a client shows (its session's current window's active pane)."""
        try:
            out = self.run(["list-clients", "-F", f"#{{client_name}}{SEP}#{{pane_id}}"])
        except TmuxError:
            return None
        return next((p for name, _, p in (line.partition(SEP) for line in out) if name == client), None)

    def resolve_pane(self, target: str) -> PaneInfo:
        """The one pane a user named, strictly: `%N` must exist; `session:window.pane` (window
        by index or by a name no other window of the session has) must name exactly one pane;
        `session:window` only a window with a single pane. Never tmux's own target lookup,
        which falls back to the current pane: typing must reach only the pane named."""
        fields = ("pane_id", "session_name", "window_index", "window_name", "pane_index", "window_id")
        rows = [line.split(SEP) for line in
                self.run(["list-panes", "-a", "-F", SEP.join(f"#{{{f}}}" for f in fields)])]
        rows = [r for r in rows if len(r) == len(fields)]
        if re.fullmatch(r"%\d+", target):
            hits = [r for r in rows if r[0] == target]
        else:
            m = re.fullmatch(r"([^:]+):([^:]+?)(?:\.(\d+))?", target)
            if not m:
                raise TmuxError(f"{target!r} is not a pane: name it as %N or session:window.pane")
            session, window, pane = m.groups()
            in_session = [r for r in rows if r[1] == session]
            if not in_session:
                raise TmuxError(f"no session {session!r}")
            by_index = [r for r in in_session if r[2] == window]
            by_name = [r for r in in_session if r[3] == window]
            if not by_index and len({r[5] for r in by_name}) > 1:
                raise TmuxError(f"{target!r} is ambiguous: {len({r[5] for r in by_name})} windows "
                                f"of {session!r} are named {window!r}; use the window's index")
            in_window = by_index or by_name
            if not in_window:
                raise TmuxError(f"no window {window!r} in session {session!r}")
            hits = [r for r in in_window if r[4] == pane] if pane is not None else in_window
            if pane is None and len(hits) > 1:
                raise TmuxError(f"{target!r} is a window of {len(hits)} panes: name one, e.g. "
                                f"{session}:{window}.{hits[0][4]}")
        # a grouped session lists the same pane again under each session: one pane still
        hits = list({r[0]: r for r in hits}.values())
        if len(hits) != 1:
            raise TmuxError(f"no pane {target!r}")
        info = next((p for p in self.listing(with_clients=False)[0] if p.pane_id == hits[0][0]), None)
        if info is None:
            raise TmuxError(f"no pane {target!r} (it just went away)")
        return info
