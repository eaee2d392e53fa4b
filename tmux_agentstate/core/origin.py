"""Proof of origin for the agents' own reports. Pure: no tmux, no processes.

`launch` makes a secret per launch and records it on its pane (`@agentstate_launch`,
"TOKEN PID": the token and the launched agent's pid) before it becomes the agent; the agent's
hooks carry the token in their environment and append it to the report they set
(`@agentstate_report`, "STATE UNIXTIME SOURCE TOKEN"). A report counts only when its token is
the one recorded on the pane it sits on: one set by a process that merely has TMUX and
TMUX_PANE (a stray script, an agent nobody launched, a report meant for another pane) does not.

The token proves where a report comes from against mistakes (inherited environments, shared
daemons, leftover processes), not against a program that already drives the user's tmux: that
one could type into the pane anyway.

The hook imports this module (a hook's start-up is what the agent waits for): nothing here
imports more than `re`.
"""
from __future__ import annotations

import re

LAUNCH_OPTION = "@agentstate_launch"
TOKEN_ENV = "AGENTSTATE_TOKEN"            # the launch's token, in the agent's environment
LAUNCH_PID_ENV = "AGENTSTATE_LAUNCH_PID"  # the launched agent's pid, beside it
HOST_PID_ENV = "AGENTSTATE_HOST_PID"      # set by our JS plugin: the agent process it runs in
TOKEN = re.compile(r"[0-9a-f]{32}")
NAME_MAX = 40
_UNSAFE = re.compile(r"[^A-Za-z0-9._:+-]")


def safe_name(text: str, limit: int = NAME_MAX) -> str:
    """An agent or event name as we publish it: letters, digits and `._:+-` only (no control
    character, space, `#` or parenthesis reaches tmux, a status line or a log), capped; an
    empty name is "-"."""
    return _UNSAFE.sub("_", str(text))[:limit] or "-"


class LaunchRecord:
    """`@agentstate_launch`: "TOKEN PID"."""
    __slots__ = ("token", "pid")

    def __init__(self, token: str, pid: int):
        self.token, self.pid = token, pid

    def __str__(self) -> str:
        return f"{self.token} {self.pid}"

    def __eq__(self, other) -> bool:
        return isinstance(other, LaunchRecord) and (self.token, self.pid) == (other.token, other.pid)

    @classmethod
    def parse(cls, text: str) -> LaunchRecord | None:
        parts = (text or "").split()
        if len(parts) != 2 or not TOKEN.fullmatch(parts[0]) or not parts[1].isdigit():
            return None
        return cls(parts[0], int(parts[1]))


def report_token(text: str) -> str:
    """The token a report carries (its fourth field), or ""."""
    parts = (text or "").split()
    return parts[3] if len(parts) > 3 else ""


def refusal(report_text: str, launch_text: str) -> str | None:
    """Why the `@agentstate_report` on a pane does not count against that pane's
    `@agentstate_launch` (one line for the log), or None when it does or there is none."""
    parts = (report_text or "").split()
    if not parts:
        return None
    token = report_token(report_text)
    record = LaunchRecord.parse(launch_text)
    if record is None:
        why = "no agent was started in this pane by `tmux-agentstate launch` (no proof of origin)"
    elif not token:
        why = "it carries no launch token (it is not from the agent launched here)"
    elif token != record.token:
        why = "its launch token is not the one recorded for this pane"
    else:
        return None
    source = safe_name(parts[2] if len(parts) > 2 else "hook", 3 * NAME_MAX)
    return f"report {safe_name(parts[0], 10)} from {source} ignored: {why}"


def proven(report, report_text: str, launch_text: str):
    """`report` (Report.parse of `report_text`) if its proof holds, its SOURCE made fit to
    publish and log (a hand-set option may hold anything); else None."""
    if report is None or refusal(report_text, launch_text) is not None:
        return None
    from dataclasses import replace  # here, not at the top: the hook never needs it
    return replace(report, source=safe_name(report.source, 3 * NAME_MAX))
