#!/usr/bin/env python3
"""Capture real GitHub Copilot CLI fixtures against the mock OpenAI server.

    python harness/copilot.py install                 # npm install the pinned @github/copilot
    python harness/copilot.py capture [--only NAME]   # run the scenarios, write fixtures/copilot/
    python harness/copilot.py list                    # the sessions
    python harness/copilot.py capture --version V     # another release: fixtures/copilot/V/

Copilot CLI runs offline with its own bring-your-own-key mode: COPILOT_OFFLINE=true (no GitHub
login, telemetry, web tools or auto-update) and COPILOT_PROVIDER_BASE_URL pointing at
harness/mock_openai.py (chat completions SSE with tool calls), COPILOT_MODEL naming the model.
COPILOT_HOME is the session's throwaway HOME/.copilot, so every session starts with the
"Confirm folder trust" dialog. COPILOT_ALLOW_ALL is left unset: tools ask before they run.
The driver waits on tmux's screen (the footer row says `Working ·` during a turn and lists
`/ commands` when idle) and snapshots the byte prefix so far as fixtures/copilot/<name>.raw
(+ .screen.txt, tmux's `capture-pane -p`). index.toml is merged, not replaced.

Processes: `node …/node_modules/.bin/copilot` (the npm loader) starts the native
`…/@github/copilot-linux-x64/copilot` in the same process group (its comm is `MainThread`).
After each session the private tmux server is killed and then, by PID, every process whose
command line or environment names the session's unique HOME (never by process name).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import Dialog, Idle, Prompt, Session, Shot, WaitText, Working, ask, keys, turn  # noqa: E402

COPILOT = common.NpmRelease("copilot", "@github/copilot", "copilot", pinned="1.0.102")
# the key-hint row every question ends with: '↑/↓ to navigate · enter to select · esc to cancel'
# (trust, shell, edit) or '↑/↓ select · enter accept · ctrl+d decline · esc cancel' (ask_user)
DIALOG_HINT = re.compile(r"^[\s│]*↑/↓ .*· esc (to )?\w+[\s│]*$", re.M)
WORKING = " Working "             # the footer during a turn ('○ Working · 99 B esc esc interrupt')


def working(screen: str) -> bool:
    """The footer (the last non-empty row) says a turn runs."""
    rows = [r for r in screen.splitlines() if r.strip()]
    return bool(rows) and WORKING in rows[-1]


def dialog(screen: str) -> bool:
    return bool(DIALOG_HINT.search(screen))


class Ctx(common.Ctx):
    release = COPILOT
    columns = (42, 22, 8)
    is_idle = staticmethod(lambda s: "Interactive ·" in s and not working(s) and not dialog(s))
    idle_what, working_what = "idle footer", "working footer"
    is_working = staticmethod(working)
    # the footer is redrawn cell by cell (styles between words): `prompt` reads tmux's screen
    dialog = staticmethod(dialog)
    take_mode = "quiet"


TRUST = [
    WaitText("Confirm folder trust", settle=1.0),
    Shot("blocked-trust", "trust", "first start in the folder: 'Confirm folder trust' dialog, '❯ 1. Yes'"),
    keys("Enter"),
    Idle(),
]
RUN_QUESTION = "Do you want to run this command?"

FIRST_80 = [
    TRUST,
    Shot("idle-start", "start", "trusted with Enter: banner, tips, empty input"),
    Prompt("please run `sleep 8; ls -la` now", wait=RUN_QUESTION),
    Dialog("blocked-command", "shell-permission", "bash tool: 'Do you want to run this command?'", ("Enter",)),
    Working("working-tool-running", "tool-running", "approved '1. Yes'; the 8 s command runs", delay=2.5),
    Idle("idle-after-approve", "after-approve", "the command finished; mock's final text"),
    turn("the date parser has a bug with leap years, please fix it", "idle-reply-question", "reply-question",
         "reply ending 'Would you like me to add a regression test?'", wait="regression test?"),
    ask(lambda c: f"create {c.proj}/src/cache_utils.py with a helper", "blocked-edit", "edit-permission",
        "create tool: the new file's diff and its question", ("Escape",)),
    Idle("idle-after-reject-esc", "after-reject", "rejected the create with Esc"),
    Prompt("take your time and think about the cache layout"),
    Working("working-before-first-token", "waiting-first-token", "mock holds the first token"),
    keys("Escape", "Escape"),
    Idle("idle-after-interrupt", "after-interrupt", "Esc Esc while waiting for the first token"),
]

BIG_160 = [
    TRUST,
    Shot("idle-start", "start", "fresh start at 160 columns"),
    common.STREAMED_REPLY,
    ask(lambda c: f"write {c.proj}/docs/NOTES.md with the release notes", "blocked-edit", "edit-permission",
        "create tool question (160 columns)", ("Enter",)),
    Idle("idle-after-approve-edit", "after-approve", "allowed the create; file written"),
    Prompt("execute `mkdir -p build && date > build/stamp.txt` for me", wait=RUN_QUESTION),
    Dialog("blocked-command", "shell-permission", "bash tool question (160 columns)"),
    keys("Down", "Down", settle=0.4),
    Shot("blocked-command-no-selected", "shell-permission",
         "same dialog with '3. No, and tell Copilot what to do differently' selected"),
    # Enter on '3. No…' left the dialog up (seen twice in 1.0.102); Esc is its documented way out
    keys("Escape"),
    Idle("idle-after-reject-esc", "after-reject", "rejected the command with Esc"),
    ask("let me choose between two designs for the cache layer first", "blocked-question", "question",
        "ask_user tool: the elicitation form", ("Escape",)),
    Idle("idle-after-dismiss", "after-reject", "dismissed the question with Esc"),
]

MID_120 = [
    TRUST,
    common.DELAYED_REPLY,
    common.interrupted_stream_steps("Escape", "Escape"),
    ask("before touching the logger, ask me which option you should use", "blocked-question", "question",
        "ask_user form (120 columns)"),
]

SESSIONS = [
    Session("first-80", 24, 80, project="webshop", run=FIRST_80),
    Session("big-160", 48, 160, project="cache-service", run=BIG_160),
    Session("mid-120", 36, 120, project="ledger", run=MID_120),
]


def setup(d: common.Driver, sess: Session, home: Path, proj: Path, mock: common.Mock) -> None:
    (home / ".copilot").mkdir(parents=True)
    common.demo_project(proj)


def env(sess: Session, home: Path, proj: Path, mock: common.Mock) -> dict:
    return {"HOME": str(home), "COPILOT_HOME": str(home / ".copilot"), "COPILOT_OFFLINE": "true",
            "COPILOT_PROVIDER_BASE_URL": f"http://127.0.0.1:{mock.port}/v1",
            "COPILOT_PROVIDER_API_KEY": "sk-mock-not-a-real-key", "COPILOT_MODEL": "mock-model",
            "COPILOT_AUTO_UPDATE": "false"}


DRIVER = common.Driver(COPILOT, "GitHub Copilot CLI", __doc__, Ctx, SESSIONS, common.openai_mock(20, 20),
                       setup=setup, env=env)

if __name__ == "__main__":
    DRIVER.main()
