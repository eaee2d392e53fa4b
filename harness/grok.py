#!/usr/bin/env python3
"""Capture real Grok CLI fixtures against the mock OpenAI server.

    python harness/grok.py install                 # npm install the pinned @vibe-kit/grok-cli
    python harness/grok.py capture [--only NAME]   # run the scenarios, write fixtures/grok/
    python harness/grok.py list                    # the sessions
    python harness/grok.py capture --version V     # another release: fixtures/grok/V/

Grok CLI (npm @vibe-kit/grok-cli, a node script on the `openai` client) takes its endpoint from
GROK_BASE_URL, its key from GROK_API_KEY and its model from GROK_MODEL, so it runs offline
against harness/mock_openai.py's chat completions with tool calls (bash, create_file,
str_replace_editor, view_file, search, todo lists; no question tool). With no key it prints one
error line and exits: there is no first-run dialog to capture. Each session gets a throwaway
HOME (Grok writes ~/.grok/user-settings.json there on the first start).

The TUI is Ink on the main screen (no alternate screen, no title of its own). A turn shows
'<spinner> <phrase>... (2s · ↑ 1.1k tokens · esc to interrupt)' above the input box; a tool
confirmation ends with the key hints '↑↓ navigate • Enter select • Esc cancel'. The driver waits
on tmux's screen and snapshots the byte prefix so far as fixtures/grok/<name>.raw (+ .screen.txt,
tmux's `capture-pane -p`), retaken until the bytes replay to exactly tmux's screen.

Processes: `node …/node_modules/.bin/grok` (the script; comm `node`). After each session the
private tmux server is killed and then, by PID, every process whose command line or
environment names the session's unique HOME (never by process name).
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import Idle, Prompt, Session, Shot, Sleep, Type, Working, ask, keys, turn  # noqa: E402

GROK = common.NpmRelease("grok", "@vibe-kit/grok-cli", "grok", pinned="0.0.34")
DIALOG_HINT = "Enter select • Esc cancel"   # a confirmation's key-hint row
WORKING = "esc to interrupt"                # the spinner row while a turn runs
COMPOSER = "auto-edit:"                     # the row under the input box


def is_idle(s: str) -> bool:
    return COMPOSER in s and WORKING not in s and DIALOG_HINT not in s


class Ctx(common.Ctx):
    release = GROK
    columns = (42, 22, 8)
    is_idle = staticmethod(is_idle)
    is_working = staticmethod(lambda s: WORKING in s)
    working_what = repr(WORKING)
    dialog = DIALOG_HINT
    take_mode = "matching"


FIRST_80 = [
    Idle("idle-start", "start", "fresh start: logo, tips, empty input box"),
    turn("the date parser has a bug with leap years, please fix it", "idle-reply-question", "reply-question",
         "reply ending 'Would you like me to add a regression test?'", wait="regression test?"),
    ask("please run `sleep 8; ls -la` now", "blocked-command", "shell-permission",
        "bash tool: 'Do you want to proceed with this operation?', '1. Yes' … '4. No, with feedback'",
        ("Enter",)),
    Working("working-tool-running", "tool-running", "approved '1. Yes'; the 8 s command runs"),
    Idle("idle-after-approve", "after-approve", "the command finished; mock's final text"),
    ask("create src/cache_utils.py with a helper", "blocked-edit", "edit-permission",
        "create_file tool: the new file's diff and the question", ("Escape",)),
    Idle("idle-after-reject-esc", "after-reject", "rejected the create with Esc"),
    Prompt("take your time and think about the cache layout"),
    Working("working-before-first-token", "waiting-first-token", "mock holds the first token"),
    keys("Escape"),
    Idle("idle-after-interrupt", "after-interrupt", "Esc while waiting for the first token"),
]

BIG_160 = [
    Idle("idle-start", "start", "fresh start at 160 columns"),
    common.STREAMED_REPLY,
    ask("write docs/NOTES.md with the release notes", "blocked-edit", "edit-permission",
        "create_file question (160 columns)", ("Enter",)),
    Idle("idle-after-approve-edit", "after-approve", "allowed the create; file written"),
    ask("execute `mkdir -p build && date > build/stamp.txt` for me", "blocked-command", "shell-permission",
        "bash question (160 columns)"),
    keys("Down", "Down", "Down", settle=0.4),
    Shot("blocked-command-feedback-selected", "shell-permission",
         "same question with '4. No, with feedback' selected"),
    keys("Enter"),
    Sleep(1.5, settle=0.6),
    Shot("blocked-feedback-input", "reject-reason",
         "'4. No, with feedback' picked: Grok asks for the feedback text"),
    # Esc did nothing here in 0.0.34 (despite 'or press Escape to go back'): type the feedback
    Type("skip the build stamp for now"),
    keys("Enter"),
    Idle("idle-after-feedback", "after-reject",
         "typed the feedback and Enter: the command is rejected with it, the mock replies"),
]

MID_120 = [
    Idle(),
    common.DELAYED_REPLY,
    common.interrupted_stream_steps("Escape"),
    ask("execute `git status --short > status.txt` for me", "blocked-command", "shell-permission",
        "bash question (120 columns)"),
    keys("Down", settle=0.4),
    Shot("blocked-command-dont-ask-selected", "shell-permission",
         "same question with '2. Yes, and don't ask again this session' selected"),
    keys("Enter"),
    Idle("idle-after-approve", "after-approve", "approved for the session; the command ran"),
]

SESSIONS = [
    Session("first-80", 24, 80, project="webshop", run=FIRST_80),
    Session("big-160", 48, 160, project="cache-service", run=BIG_160),
    Session("mid-120", 36, 120, project="ledger", run=MID_120),
]

DRIVER = common.Driver(
    GROK, "Grok CLI", __doc__, Ctx, SESSIONS, common.openai_mock(20, 20),
    env=lambda sess, home, proj, mock: {"HOME": str(home), "GROK_BASE_URL": f"http://127.0.0.1:{mock.port}/v1",
                                        "GROK_API_KEY": "sk-mock-not-a-real-key", "GROK_MODEL": "mock-model"})

if __name__ == "__main__":
    DRIVER.main()
