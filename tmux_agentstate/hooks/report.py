"""`hook AGENT EVENT`: an agent's own lifecycle report, recorded on its tmux pane.

Runs inside the agent's hook, so it must never get in the way: it prints `{}`, exits 0 even on
errors, and imports nothing heavy (it is run as `python -m tmux_agentstate.hook`, which skips the
CLI's imports). tmux is the bus: the report is the pane option `@agentstate_report`,
"STATE UNIXTIME SOURCE", which the sidecar reads on its next sweep.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

GONE = "gone"

# (agent, event) → state; a callable looks at the payload
def _claude(event: str, payload: dict) -> str | None:
    if event in ("UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "SubagentStart"):
        return "working"
    if event == "PreToolUse":
        # these tools are dialogs: the user must answer before anything runs
        return "blocked" if payload.get("tool_name") in ("AskUserQuestion", "ExitPlanMode") else "working"
    if event == "PermissionRequest":
        return "blocked"
    if event == "Notification":
        kind = payload.get("notification_type") or ""
        message = str(payload.get("message") or "")
        if kind == "permission_prompt" or "permission" in message.lower():
            return "blocked"
        return None  # "waiting for input" after a minute idle says nothing new
    if event in ("Stop", "StopFailure", "SubagentStop"):
        return "idle" if event != "SubagentStop" else None
    if event == "SessionEnd":
        return GONE
    return None


def _codex(event: str, payload: dict) -> str | None:
    if event in ("PermissionRequest", "permission_request"):
        return "blocked"
    if event in ("UserPromptSubmit", "PreToolUse", "PostToolUse"):
        return "working"
    if event in ("Stop", "agent-turn-complete", "notify"):
        # `notify` also fires for Codex's background title thread while the real turn runs:
        # only the main turn's completion counts (payload type agent-turn-complete)
        kind = payload.get("type") or event
        return "idle" if kind in ("Stop", "agent-turn-complete") else None
    if event == "SessionEnd":
        return GONE
    return None


def _gemini(event: str, payload: dict) -> str | None:
    if event == "Notification":
        kind = payload.get("notification_type") or payload.get("type") or ""
        return "blocked" if "ToolPermission" in str(kind) else None
    if event in ("BeforeAgent", "BeforeTool", "AfterTool", "BeforeModel"):
        return "working"
    if event == "AfterAgent":
        return "idle"
    if event == "SessionEnd":
        return GONE
    return None


def _copilot(event: str, payload: dict) -> str | None:
    """Copilot CLI's plugin hooks (camelCase events, checked with 1.0.102)."""
    if event in ("userPromptSubmitted", "postToolUse", "postToolUseFailure"):
        return "working"
    if event == "preToolUse":
        # ask_user is the question form: nothing runs until the user answers
        return "blocked" if payload.get("toolName") == "ask_user" else "working"
    if event == "notification":
        # also sent for a finished shell or an idle agent; these two are a dialog on screen
        kind = payload.get("notification_type") or ""
        return "blocked" if kind in ("permission_prompt", "elicitation_dialog") else None
    if event == "agentStop":
        return "idle"
    if event == "sessionEnd":
        return GONE
    return None


def _opencode(event: str, payload: dict) -> str | None:
    """opencode's and Kilo's bus events, sent by hooks/opencode_plugin/agentstate.js (checked
    with opencode 1.18.33 and Kilo 7.7.7)."""
    if event in ("permission.asked", "question.asked"):
        return "blocked"
    if event in ("chat.message", "permission.replied", "question.replied", "question.rejected"):
        return "working"  # a reject or dismissal ends the turn: session.idle follows
    if event == "session.status":
        status = payload.get("status")
        kind = status.get("type") if isinstance(status, dict) else None
        return {"busy": "working", "retry": "working", "idle": "idle"}.get(kind)
    if event == "session.idle":
        return "idle"
    if event == "dispose":  # the TUI quits; no session.deleted comes
        return GONE
    return None  # session.error: an interrupt or a failed turn, its idle follows


def _generic(event: str, payload: dict) -> str | None:
    e = event.lower()
    for state in ("blocked", "working", "idle"):
        if e == state:
            return state
    return GONE if e in ("gone", "exit", "session_end") else None


MAPPERS = {"claude": _claude, "codex": _codex, "gemini": _gemini, "copilot": _copilot,
           "opencode": _opencode, "kilo": _opencode}


def state_for(agent: str, event: str, payload: dict) -> str | None:
    return MAPPERS.get(agent, _generic)(event, payload if isinstance(payload, dict) else {})


def record(agent: str, event: str, payload: dict, pane: str | None = None,
           now: float | None = None) -> str | None:
    """Set the pane's report option; returns the state recorded (None: nothing to record)."""
    pane = pane or os.environ.get("TMUX_PANE")
    state = state_for(agent, event, payload)
    if not pane or state is None or not os.environ.get("TMUX"):
        return state
    if state == GONE:
        args = ["set-option", "-p", "-u", "-t", pane, "@agentstate_report"]
    else:
        value = f"{state} {now if now is not None else time.time():.3f} hook:{agent}:{event}"
        args = ["set-option", "-p", "-t", pane, "@agentstate_report", value]
    subprocess.run(["tmux", *args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=2)
    return state


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        agent, event = (argv + ["", ""])[:2]
        if len(argv) > 2:  # Codex's `notify` passes its JSON as the last argument
            raw = argv[-1]
        else:
            raw = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
        try:
            payload = json.loads(raw) if raw.strip() else {}
        except ValueError:
            payload = {}
        if not event and isinstance(payload, dict):
            event = str(payload.get("hook_event_name") or payload.get("type") or "")
        record(agent, event, payload)
    except Exception:  # a hook must never break the agent
        pass
    finally:
        try:
            sys.stdout.write("{}\n")
            sys.stdout.flush()
        except Exception:
            pass
    return 0

