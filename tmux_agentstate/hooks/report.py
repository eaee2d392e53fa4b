"""`hook AGENT EVENT`: an agent's own lifecycle report, recorded on its tmux pane.

Runs inside the agent's hook, so it must never get in the way: it prints `{}` (or its agent's
OUTPUT), exits 0 even on errors, and imports nothing heavy (it is run as
`python -m tmux_agentstate.hook`, which skips the CLI's imports). tmux is the bus: the report
is the pane option `@agentstate_report`, "STATE UNIXTIME SOURCE TOKEN"; then the hook rings its
sidecar's doorbell (sidecar/doorbell.py), which reads the report at once.

Proof of origin (core/origin.py): the report carries the token `launch` put in the agent's
environment, and lands only if the pane's `@agentstate_launch` records that token (one tmux
command: `if-shell -F` compares them inside tmux). An environment is inherited by everything the
agent starts, so the hook also checks that the process running it is the launched agent itself:
an agent started inside a tool call of the one launched here, or a daemon that outlives it, has
the same token and TMUX_PANE but another pid, and its reports must not overwrite this pane's.
Without a token (nobody launched it) a report is set only on a pane no launched agent owns,
where it overwrites nothing proven; the sidecar ignores it there, with one log line.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

from ..core.origin import HOST_PID_ENV, LAUNCH_OPTION, LAUNCH_PID_ENV, TOKEN, TOKEN_ENV, safe_name

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


def _droid(event: str, payload: dict) -> str | None:
    """Factory Droid's Claude-style hooks (checked with 0.215.0): no PermissionRequest fires; an
    approval is a permission_prompt Notification, an AskUser form an elicitation_dialog one."""
    if event in ("UserPromptSubmit", "PostToolUse"):
        return "working"
    if event == "PreToolUse":
        return "blocked" if payload.get("tool_name") == "AskUser" else "working"
    if event == "Notification":
        kind = payload.get("notification_type") or ""
        return "blocked" if kind in ("permission_prompt", "elicitation_dialog") else None
    if event == "Stop":
        return "idle"
    if event == "SessionEnd":
        return GONE
    return None


def _generic(event: str, payload: dict) -> str | None:
    e = event.lower()
    for state in ("blocked", "working", "idle"):
        if e == state:
            return state
    return GONE if e in ("gone", "exit", "session_end") else None


MAPPERS = {"claude": _claude, "codex": _codex, "gemini": _gemini, "copilot": _copilot,
           "opencode": _opencode, "kilo": _opencode, "droid": _droid}
# what a hook prints for its agent (default `{}`): Droid otherwise writes each hook's run into
# its transcript ("Hooks Stop └─ <command> : Exit code 0")
OUTPUT = {"droid": '{"suppressOutput":true}'}


def state_for(agent: str, event: str, payload: dict) -> str | None:
    return MAPPERS.get(agent, _generic)(event, payload if isinstance(payload, dict) else {})


# what runs a hook command for the agent: skipped on the way up to the agent itself
SHELLS = frozenset(("sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "busybox"))
PANE_ID = re.compile(r"%[0-9]+")


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(name, parent pid, process group) from /proc, or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read(1024)
        name = data[data.find(b"(") + 1:data.rfind(b")")].decode(errors="replace")
        fields = data[data.rfind(b")") + 2:].split()
        return name, int(fields[1]), int(fields[2])
    except (OSError, ValueError, IndexError):
        return None


def run_by_launched_agent(environ) -> bool:
    """Whether the agent that runs this hook is the one `launch` started (LAUNCH_PID_ENV): the
    first process above the hook that is not a shell is that pid, or its own child in its
    process group (an npm wrapper's native binary: Codex, Copilot). An agent started inside a
    tool call sits below a shell the launched agent started; a Codex app-server daemon is its
    own process group. Where /proc cannot tell, the token alone decides."""
    try:
        launched = int(environ.get(LAUNCH_PID_ENV) or "")
    except ValueError:
        return False
    parent = os.getppid()
    host = environ.get(HOST_PID_ENV) or ""
    if host.isdigit() and int(host) != parent:
        # our JS plugin checked its host in-process; the host quit before this report ran
        # (opencode's `dispose`), so there is nothing above us to look at any more
        return True
    if _stat(os.getpid()) is None:
        return True  # no /proc: cannot tell
    pid = parent
    for _ in range(8):
        st = _stat(pid)
        if st is None:
            # it exited while we looked (a nested agent that does not wait for its hook):
            # the launched agent waits for its own hooks, so a chain that breaks is not its
            return False
        name, ppid, pgrp = st
        if name not in SHELLS:
            break
        pid = ppid
    else:
        return False
    if pid == launched:
        return True
    agent = _stat(launched)
    return ppid == launched and agent is not None and agent[2] == pgrp


def report_command(pane: str, state: str, source: str, now: float, environ) -> list[str] | None:
    """The one tmux command that records this report on `pane`, or None when it must not."""
    token = environ.get(TOKEN_ENV) or ""
    if state == GONE:
        setting = f"set-option -p -u -t {pane} @agentstate_report"
    else:
        value = f"{state} {now:.3f} {source}" + (f" {token}" if token else "")
        setting = f"set-option -p -t {pane} @agentstate_report '{value}'"  # no quote in value
    if not token:
        # "is the pane's launch record empty", compared: `if-shell -F` takes a value whose FIRST
        # character is '0' as false, and a record starting with a token like "0a3f…" (one
        # launch in 16) would have let any process's report overwrite the launched agent's
        return ["if-shell", "-F", "-t", pane, f"#{{!=:#{{{LAUNCH_OPTION}}},}}", "", setting]
    if not TOKEN.fullmatch(token) or not run_by_launched_agent(environ):
        return None
    launched = f"{token} {environ.get(LAUNCH_PID_ENV)}"
    return ["if-shell", "-F", "-t", pane, f"#{{==:#{{{LAUNCH_OPTION}}},{launched}}}", setting]


def record(agent: str, event: str, payload: dict, pane: str | None = None,
           now: float | None = None, environ=None) -> str | None:
    """Set the pane's report option; returns the state recorded (None: nothing to record)."""
    environ = os.environ if environ is None else environ
    pane = pane or environ.get("TMUX_PANE") or ""
    state = state_for(agent, event, payload)
    if not PANE_ID.fullmatch(pane) or state is None or not environ.get("TMUX"):
        return state
    source = f"hook:{safe_name(agent)}:{safe_name(event)}"
    command = report_command(pane, state, source, time.time() if now is None else now, environ)
    if command is None:
        return state
    subprocess.run(["tmux", *command], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=2)
    ring_sidecar(environ["TMUX"], pane)
    return state


def ring_sidecar(tmux_env: str, pane: str) -> bool:
    """Wake the sidecar of this tmux server (`$TMUX`: its socket path before the first comma)
    to read this pane's report now, not at its next pane listing (sidecar/doorbell.py). After
    the tmux command: the sidecar reads the report from tmux, where `if-shell` proved it.
    Nothing happens, at once, when no sidecar runs."""
    from ..sidecar.doorbell import ring  # both light: a hook's start-up is the agent's wait
    from ..sidecar.folder import server_dir
    socket_path = tmux_env.split(",")[0]
    if not socket_path:
        return False
    try:
        return ring(server_dir(socket_path), pane)
    except (OSError, ValueError):
        return False


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    agent, event = (argv + ["", ""])[:2]  # before the try: the finally prints for this agent
    try:
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
            sys.stdout.write(OUTPUT.get(agent, "{}") + "\n")
            sys.stdout.flush()
        except Exception:
            pass
    return 0

