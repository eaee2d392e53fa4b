"""combine(): the one place that decides a pane's state from its signals. Pure.

Order (DESIGN.md §5), the first that applies wins:
0. no agent in front (the shell is back, or nothing we know) → no state at all. The agent's
   last screen may still show its prompt, but nobody is waiting any more;
1. a `blocked` match on the emulated screen: always stands;
2. a fresh report from the agent itself (hook, session file, OSC);
3. the remaining screen rules; no rule matched → the manifest's fallback (never blocked).
A report goes stale after `report_lifetime` seconds (a hook that failed silently), and it is
superseded as soon as the screen's own verdict changes after it: Esc on a Claude prompt fires
no hook, but the prompt leaving the screen is newer evidence than the PermissionRequest report.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from .manifest import Match

REPORT_LIFETIME = 30.0


@dataclass(frozen=True)
class Report:
    state: str        # blocked | working | idle
    at: float         # unix seconds
    source: str       # e.g. "hook:claude", "session-file"

    @classmethod
    def parse(cls, text: str) -> "Report | None":
        """The `@agentstate_report` option: "STATE UNIXTIME SOURCE"."""
        parts = text.split()
        if len(parts) < 2 or parts[0] not in ("blocked", "working", "idle"):
            return None
        try:
            at = float(parts[1])
        except ValueError:
            return None
        return cls(parts[0], at, parts[2] if len(parts) > 2 else "hook")


def report_from_claude_session(data: dict, mtime: float) -> Report | None:
    """Claude Code's session file as a report: busy → working, waiting → blocked, idle."""
    status = data.get("status")
    state = {"busy": "working", "waiting": "blocked", "idle": "idle"}.get(status if isinstance(status, str) else "")
    if state is None:
        return None
    return Report(state, mtime, "session-file")


def newest(*reports: Report | None) -> Report | None:
    found = [r for r in reports if r is not None]
    return max(found, key=lambda r: r.at) if found else None


@dataclass(frozen=True)
class PaneState:
    state: str
    source: str       # screen | hook | process
    detail: str = ""  # the matched prompt line (raw pane text: escape before display)
    rule: str | None = None
    mark: str = ""    # the screen's mark (an error the turn ended in), whatever decided the state
    mark_line: str = ""  # its row (raw pane text)


def report_in_force(report: Report | None, now: float, screen_changed_at: float = 0.0,
                    report_lifetime: float = REPORT_LIFETIME) -> bool:
    return (report is not None and report.at >= screen_changed_at
            and -5 <= now - report.at <= report_lifetime)  # -5: clocks of two processes


def combine(agent_in_front: bool, screen: Match | None, report: Report | None, now: float,
            report_lifetime: float = REPORT_LIFETIME, screen_changed_at: float = 0.0) -> PaneState | None:
    """`screen_changed_at`: unix time the screen's own verdict last changed (0: unknown)."""
    if not agent_in_front:
        return None
    state = _state(screen, report, now, report_lifetime, screen_changed_at)
    if screen is not None and screen.mark:
        return replace(state, mark=screen.mark, mark_line=screen.mark_line or "")
    return state


def _state(screen: Match | None, report: Report | None, now: float, report_lifetime: float,
           screen_changed_at: float) -> PaneState:
    if screen is not None and screen.state == "blocked":
        return PaneState("blocked", "screen", screen.line or "", screen.rule)
    if report_in_force(report, now, screen_changed_at, report_lifetime):
        return PaneState(report.state, "hook", "", report.source)
    if screen is not None:
        return PaneState(screen.state, "screen", screen.line or "" if screen.rule else "", screen.rule)
    return PaneState("idle", "process")
