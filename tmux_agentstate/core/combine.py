"""combine(): the one place that decides a pane's state from its signals. Pure.

Order (DESIGN.md §5), the first that applies wins:
0. no agent in front (the shell is back, or nothing we know) → no state at all. The agent's
   last screen may still show its prompt, but nobody is waiting any more;
1. a `blocked` match on the emulated screen: always stands;
2. a fresh report from the agent itself (hook, session file, OSC 7501): the newest in force;
3. the remaining screen rules; no rule matched → the manifest's fallback (never blocked).
A hook or session-file report goes stale after `report_lifetime` seconds (a hook that failed
silently), and it is superseded as soon as the screen's own verdict changes after it: Esc on a
Claude prompt fires no hook, but the prompt leaving the screen is newer evidence than the
PermissionRequest report.
An OSC 7501 record (core/status.py) neither goes stale nor is superseded by the screen: it
comes in the agent's own output stream, which states every change itself (Codex 0.171 sends
`idle` after an interrupt or a rejected dialog, `working` while reply text streams under an
idle-looking screen), so it stands until the agent replaces or clears it, or another agent
comes in front (a new watch, a fresh board). A newer hook report still beats it while fresh.
"""
from __future__ import annotations

import base64
import math

from dataclasses import dataclass, replace

from .manifest import Match
from .status import STATES, ProgramStatus, StatusRecord

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
        if not math.isfinite(at):  # "inf" would be a report that never goes stale
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


def screen_verdict_since(before: str | None, before_at: float, verdict: str, now: float) -> float:
    """When the screen's own verdict (its rules' state) last changed, seen at `now`: `before`
    is the verdict of the last look (None: no earlier look) and `before_at` when that one
    began. A first look counts as a change: a report from before it must not beat what the
    screen shows now; a newer report still does. The sidecar calls this at every
    classification; a fresh look (`explain`, `send`, `answer`) with what the sidecar published
    (`@agentstate_screen`), so both supersede the same reports."""
    return before_at if before is not None and verdict == before else now


SCREEN_OPTION = "@agentstate_screen"  # "VERDICT UNIXTIME": the screen verdict and its change


def screen_option(verdict: str, since: float) -> str:
    return f"{verdict} {since:.3f}"


def parse_screen_option(text: str) -> tuple[str, float] | None:
    """`@agentstate_screen` as the sidecar published it; None if unset or not ours."""
    parts = text.split()
    if len(parts) != 2 or parts[0] not in ("blocked", "working", "idle"):
        return None
    try:
        at = float(parts[1])
    except ValueError:
        return None
    return (parts[0], at) if math.isfinite(at) else None


def fresh_screen_changed_at(published: str, verdict: str, now: float) -> float:
    """`screen_changed_at` for a fresh look at a pane whose screen verdict is `verdict` now.
    With a sidecar watching, the rule it applies (`screen_verdict_since`) on what it last
    published: the same verdict → its change time; another → it changed after the sidecar's
    last look, so now (as the sidecar's next look will say). With none: 0, unknown (no report
    is taken as superseded; `answer` never types on a report alone anyway)."""
    seen = parse_screen_option(published)
    if seen is None:
        return 0.0
    return screen_verdict_since(seen[0], seen[1], verdict, now)


def report_in_force(report: Report | None, now: float, screen_changed_at: float = 0.0,
                    report_lifetime: float = REPORT_LIFETIME) -> bool:
    return (report is not None and report.at >= screen_changed_at
            and -5 <= now - report.at <= report_lifetime)  # -5: clocks of two processes


def combine(agent_in_front: bool, screen: Match | None, report: Report | None, now: float,
            report_lifetime: float = REPORT_LIFETIME, screen_changed_at: float = 0.0,
            record: StatusRecord | None = None) -> PaneState | None:
    """`screen_changed_at`: unix time the screen's own verdict last changed (0: unknown);
    `record`: the agent's root OSC 7501 record (core/status.py), if it stated one."""
    if not agent_in_front:
        return None
    state = _state(screen, report, now, report_lifetime, screen_changed_at, record)
    if screen is not None and screen.mark:
        return replace(state, mark=screen.mark, mark_line=screen.mark_line or "")
    return state


def _state(screen: Match | None, report: Report | None, now: float, report_lifetime: float,
           screen_changed_at: float, record: StatusRecord | None) -> PaneState:
    if screen is not None and screen.state == "blocked":
        return PaneState("blocked", "screen", screen.line or "", screen.rule)
    hook = report if report_in_force(report, now, screen_changed_at, report_lifetime) else None
    if record is not None and (hook is None or record.at >= hook.at):
        return record_state(record)
    if hook is not None:
        return PaneState(hook.state, "hook", "", hook.source)
    if screen is not None:
        return PaneState(screen.state, "screen", screen.line or "" if screen.rule else "", screen.rule)
    return PaneState("idle", "process")


# an OSC 7501 state as a pane state: `done` is a turn over (idle; "done" while unseen is the
# sidecar's, as for any turn that ends), `error` one that failed (idle, with its mark)
PANE_STATE_OF = {"idle": "idle", "working": "working", "blocked": "blocked", "done": "idle",
                 "error": "idle"}


def record_source(status: ProgramStatus) -> str:
    """What a record is called where a report's source is said: `osc:codex`."""
    return f"osc:{status.app}" if status.app else "osc"


def record_state(record: StatusRecord) -> PaneState:
    """The pane state the agent's root record states: a blocked one's message is its detail
    (a dialog's title), an error's message the row of its mark (`error_mark`)."""
    st = record.status
    if st.state == "error":
        return PaneState("idle", "hook", "", record_source(st), st.error_mark(), st.message)
    return PaneState(PANE_STATE_OF[st.state], "hook", st.message if st.state == "blocked" else "",
                     record_source(st))


def record_decides(state: PaneState | None) -> bool:
    """Whether an OSC record decided this state (its rule is the record's source)."""
    return state is not None and state.source == "hook" and (state.rule or "").split(":")[0] == "osc"


OSC_OPTION = "@agentstate_osc"  # the root OSC record, as the sidecar took it (see osc_option)


@dataclass(frozen=True)
class RecordShown:
    """The agent's root OSC record as the sidecar published it: for `explain`, `send` and
    the popup, which read no bytes."""
    record: StatusRecord
    children: int     # child records (sub-agents) working or blocked
    decides: bool     # it decided the published state


def osc_option(record: StatusRecord, children: int, decides: bool) -> str:
    """`@agentstate_osc`: "STATE UNIXTIME APP KIND CHILDREN DECIDES MSG", "-" for an empty
    field, the message in base64 (pane text: never a format, never a separator)."""
    st = record.status
    msg = base64.b64encode(st.message.encode("utf-8")).decode("ascii") if st.message else "-"
    return (f"{st.state} {record.at:.3f} {st.app or '-'} {st.kind or '-'} {children} "
            f"{int(decides)} {msg}")


def parse_osc_option(text: str) -> RecordShown | None:
    """`@agentstate_osc` back; None if unset or not ours."""
    parts = text.split()
    if len(parts) != 7 or parts[0] not in STATES or not parts[4].isdigit():
        return None
    try:
        at = float(parts[1])
    except ValueError:
        return None
    # through the protocol's own parser: an option anyone could set is checked as a payload is
    app, kind = ("" if p == "-" else p for p in parts[2:4])
    msg = "" if parts[6] == "-" else parts[6]
    status = ProgramStatus.parse(f"state={parts[0]}:app={app}:kind={kind}:msg={msg}")
    if status is None or not math.isfinite(at):
        return None
    return RecordShown(StatusRecord(status, at), int(parts[4]), parts[5] == "1")
