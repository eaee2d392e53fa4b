"""Remote hosts' agent panes in the local view (`list`, the popup, `next`, `answer`), and how
to reach or answer one. The sidecar's host links write the rows to hosts.json and serve
hosts.sock (sidecar/hosts/files.py); the commands only read that file and ask through that
socket: they never open a link of their own.

What a host sent is untrusted: each row is checked and cleaned again here (hostproto.clean_row)
before anything shows it. A host name reaches a command line only when it is one the user wrote
in @agentstate-hosts (and does not start with '-', which ssh would read as an option), a pane
id only as %N, and the command runs without a shell (new-window with its arguments).
"""
from __future__ import annotations

import re
import shlex
from pathlib import Path

from ..core.hostproto import clean_row, clean_text
from ..sidecar.hosts import files
from ..sidecar.runtime import Runtime
from ..tmux import Tmux, TmuxError

# window options on a local window we opened attached to a host: which host, and the pane we
# last sent it to (so `next` pressed there moves on to the next pane)
HOST_OPTION = "@agentstate_remote_host"
PANE_OPTION = "@agentstate_remote_pane"
ASK_PATIENCE = 5.0  # seconds a key waits for a host's answer to a focus
_PANE = re.compile(r"%\d{1,9}")
_SEP = "\t"  # not in a host name (the option is split on whitespace), a pane id or an id


def runtime_dir(tmux: Tmux) -> Path:
    """The local sidecar's runtime folder, where hosts.json and hosts.sock are."""
    return Runtime(tmux.socket()).dir


def remote_rows(folder: Path) -> list[dict]:
    """Every remote row the sidecar last wrote, cleaned, each with `host`, `stale` and
    `last_update` (when anything last came from its host; None: never)."""
    out = []
    for h in files.read_hosts(folder):
        host = clean_text(h["host"], 200)
        rows = h.get("rows")
        if not host or not isinstance(rows, list):
            continue
        update = h.get("last_update")
        update = update if isinstance(update, (int, float)) and not isinstance(update, bool) else None
        for r in files.remote_rows([{**h, "host": host, "rows": rows}]):
            row = clean_row(r)
            if row is not None:
                out.append({**row, "host": host, "stale": r["stale"], "last_update": update})
    return out


def all_rows(tmux: Tmux, folder: Path | None = None) -> list[dict]:
    """Local agent panes (`host` "", ssh panes included), then every remote row."""
    rows = [{**r, "host": ""} for r in tmux.agent_panes()]
    try:
        return rows + remote_rows(folder if folder is not None else runtime_dir(tmux))
    except (TmuxError, OSError):
        return rows


def where(r: dict) -> str:
    """A row's address as the user reads it: `host:session:window.pane` for a remote one."""
    return f"{r['host']}:{r['target']}" if r.get("host") else r["target"]


def answer(folder: Path, row: dict, choice: str) -> tuple[int, str]:
    """Answer a remote pane's dialog: the host's own fresh look decides (through the link)."""
    code, text = files.ask(folder, {"op": "answer", "host": row["host"], "pane": row["pane"],
                                    "choice": choice})
    return code, clean_text(text, 300)


def _settings(tmux: Tmux) -> tuple[list[str], list[str]]:
    """(the user's hosts, the ssh command line); ValueError when @agentstate-ssh cannot be split."""
    options = tmux.global_options()
    ssh = shlex.split(options.get("@agentstate-ssh", "") or "ssh")
    return options.get("@agentstate-hosts", "").split(), ssh or ["ssh"]


def client_view(tmux: Tmux, client: str) -> tuple[str, str, str, str] | None:
    """What a client shows: (its pane, its session's id, the host and remote pane of a window
    we opened there, else "", "")."""
    fmt = _SEP.join(("#{client_name}", "#{pane_id}", "#{session_id}", f"#{{{HOST_OPTION}}}",
                     f"#{{{PANE_OPTION}}}"))
    try:
        lines = tmux.run(["list-clients", "-F", fmt])
    except TmuxError:
        return None
    for line in lines:
        parts = line.split(_SEP)
        if len(parts) == 5 and parts[0] == client:
            return parts[1], parts[2], parts[3], parts[4]
    return None


def _window_for(tmux: Tmux, host: str) -> str | None:
    """A live local window we opened attached to `host` (its ssh still runs)."""
    fmt = _SEP.join(("#{window_id}", "#{pane_dead}", f"#{{{HOST_OPTION}}}"))
    for line in tmux.run(["list-windows", "-a", "-F", fmt]):
        window, dead, tagged = (line.split(_SEP) + ["", "", ""])[:3]
        if tagged == host and dead != "1":
            return window
    return None


def reach(tmux: Tmux, row: dict, client: str | None, session: str | None = None) -> str:
    """Show a remote pane in `client`: the window we opened for its host, asked to focus the
    pane, else a new window attaching to it over ssh. One line: what happened."""
    host, pane = row["host"], row["pane"]
    try:
        hosts, ssh = _settings(tmux)
    except ValueError as e:
        return f"@agentstate-ssh cannot be split ({e}); nothing opened"
    if host not in hosts or host.startswith("-"):
        return f"{host!r} is not one of @agentstate-hosts; nothing opened"
    if not _PANE.fullmatch(pane):
        return f"{pane!r} is not a pane id; nothing opened"
    if session is None and client:
        view = client_view(tmux, client)
        session = view[1] if view else None
    window = _window_for(tmux, host)
    if window is not None:
        code, text = files.ask(runtime_dir(tmux), {"op": "focus", "host": host, "pane": pane},
                               timeout=ASK_PATIENCE)
        tmux.run(["set-option", "-w", "-t", window, PANE_OPTION, pane],
                 ["select-window", "-t", window])
        _switch(tmux, window, client)
        return f"in the window on {host}" + (f", but {host} did not focus {pane}: "
                                             f"{clean_text(text, 200)}" if code else "")
    name = "@" + re.sub(r"[^A-Za-z0-9_.@-]", "_", host)[:30]
    new = ["new-window", "-d", "-P", "-F", "#{window_id}", "-n", name,
           *(["-t", f"{session}:"] if session else []),
           *ssh, "-t", host, "tmux", "attach", "-t", pane]  # argv: tmux runs it without a shell
    window = tmux.run(new)[0]
    tmux.run(["set-option", "-w", "-t", window, HOST_OPTION, host],
             ["set-option", "-w", "-t", window, PANE_OPTION, pane],
             ["select-window", "-t", window])
    _switch(tmux, window, client)
    return f"a new window attaching to {host}"


def _switch(tmux: Tmux, window: str, client: str | None) -> None:
    try:  # as Tmux.jump_to: no client when run outside one (tests, scripts)
        tmux.run(["switch-client", *(["-c", client] if client else []), "-t", window])
    except TmuxError:
        if client:
            raise
