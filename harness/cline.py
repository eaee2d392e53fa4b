#!/usr/bin/env python3
"""Capture real Cline CLI fixtures against the mock OpenAI server.

    python harness/cline.py install                 # npm install the pinned cline
    python harness/cline.py capture [--only NAME]   # run the scenarios, write fixtures/cline/
    python harness/cline.py list                    # the sessions
    python harness/cline.py capture --version V     # another release: fixtures/cline/V/

Cline's CLI (npm `cline`, a native binary from @cline/cli-<platform>) takes any
OpenAI-compatible endpoint: before each session the driver runs its own
`cline auth -p openai -k KEY -m mock-model -b http://127.0.0.1:PORT/v1` in the throwaway HOME
(it writes ~/.cline/data/settings/providers.json, provider `openai-compatible`), then starts
the TUI with `cline --auto-approve false` (the default approves every tool). Each start shows a
promotion first ("Try ClinePass", "Get Cline Desktop"… / "Press Enter to open, any other key
to close"); Esc closes it.

The TUI is on the alternate screen; the title is `Cline`, then `> <first prompt>`. The driver
waits on tmux's screen and snapshots the byte prefix so far as fixtures/cline/<name>.raw
(+ .screen.txt, tmux's `capture-pane -p`), retaken until the bytes replay to exactly tmux's
screen.

Processes: `…/node_modules/.bin/cline` is a link to the native `@cline/cli-linux-x64/bin/cline`
(comm `cline`); it starts a detached hub daemon (`cline --cline-hub-daemon …`, its own session)
that outlives the TUI. After each session the private tmux server is killed and then, by PID,
every process whose command line or environment names the session's unique HOME (the daemon
included; never by process name).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import Idle, Prompt, Session, Shot, WaitText, Working, ask, keys, turn  # noqa: E402

CLINE = common.NpmRelease("cline", "cline", "cline", pinned="3.0.65")
SPINNER = re.compile(r"^\s*[\u2801-\u28ff] \S", re.M)   # a running entry: '⠋ run_commands(…)'
PERMISSION = "[y] Approve"                               # 'Approve tool call?' key row
QUESTION = "Cline is asking a question"
PROMO = "Press Enter to open, any other key to close"
FOOTER = "Auto-approve all"                              # the row under the input box


def working(s: str) -> bool:
    return bool(SPINNER.search(s)) or "(esc to cancel)" in s


def dialog(s: str) -> bool:
    return PERMISSION in s or QUESTION in s


def is_idle(s: str) -> bool:
    return FOOTER in s and not working(s) and not dialog(s) and PROMO not in s


class Ctx(common.Ctx):
    release = CLINE
    columns = (42, 22, 8)
    is_idle = staticmethod(is_idle)
    is_working = staticmethod(working)
    working_what = "a running entry"
    dialog = PERMISSION                       # what wait_dialog waits for unless told
    started = staticmethod(lambda s: working(s) or dialog(s))
    take_mode = "matching"


def close_promo(shoot: bool = False) -> list:
    return [WaitText(PROMO, settle=1.0),
            [Shot("idle-start-promo", "start",
                  "first start: a promotion over the input ('Press Enter to open, any other key to "
                  "close'); nothing asked of the agent's work")] if shoot else [],
            keys("Escape")]


FIRST_80 = [
    close_promo(shoot=True),
    Idle("idle-start", "start", "promotion closed with Esc: logo, 'What can I do for you?'"),
    turn("the date parser has a bug with leap years, please fix it", "idle-reply-question", "reply-question",
         "reply ending 'Would you like me to add a regression test?'", wait="regression test?"),
    ask("please run `sleep 8; ls -la` now", "blocked-command", "shell-permission",
        "run_commands: 'Cline needs permission / Approve tool call?', '[y] Approve   [n] Deny'", ("y",)),
    Working("working-tool-running", "tool-running", "approved with y; the 8 s command runs", wait=False),
    Idle("idle-after-approve", "after-approve", "the command finished; mock's final text"),
    ask(lambda c: f"create {c.proj}/src/cache_utils.py with a helper", "blocked-edit", "edit-permission",
        "editor tool: 'Approve tool call?' naming the file", ("n",)),
    Idle("idle-after-reject", "after-reject", "denied the edit with n"),
    Prompt("take your time and think about the cache layout"),
    Working("working-before-first-token", "waiting-first-token",
            "mock holds the first token: '⠇ Thinking... (esc to cancel)'"),
    keys("Escape"),
    Idle("idle-after-interrupt", "after-interrupt", "Esc while waiting for the first token"),
]

BIG_160 = [
    close_promo(),
    Idle("idle-start", "start", "fresh start at 160 columns, promotion closed"),
    ask("let me choose between two designs for the cache layer first", "blocked-question", "question",
        "ask_question tool: 'Cline is asking a question', options, 'Type a response...'", ("Enter",),
        needle=QUESTION),
    Idle("idle-after-question-answered", "after-reply", "picked the first option with Enter"),
    common.STREAMED_REPLY,
    ask(lambda c: f"write {c.proj}/docs/NOTES.md with the release notes", "blocked-edit", "edit-permission",
        "editor tool permission (160 columns)", ("y",)),
    Idle("idle-after-approve-edit", "after-approve", "approved the write with y"),
]

MID_120 = [
    close_promo(),
    Idle(),
    common.DELAYED_REPLY,
    common.interrupted_stream_steps("Escape"),
    ask("execute `git status --short > status.txt` for me", "blocked-command", "shell-permission",
        "run_commands permission (120 columns)", ("Escape",)),
    Idle("idle-after-reject-esc", "after-reject", "Esc on the permission"),
    ask("before touching the logger, ask me which option you should use", "blocked-question", "question",
        "ask_question (120 columns)", ("Escape",), needle=QUESTION),
    Idle("idle-after-dismiss", "after-reject", "Esc on the question"),
]

SESSIONS = [
    Session("first-80", 24, 80, project="webshop", run=FIRST_80),
    Session("big-160", 48, 160, project="cache-service", run=BIG_160),
    Session("mid-120", 36, 120, project="ledger", run=MID_120),
]


def setup(d: common.Driver, sess: Session, home: Path, proj: Path, mock: common.Mock) -> None:
    home.mkdir(parents=True)
    common.demo_project(proj)
    # Cline's own way to point a provider at an endpoint (it writes providers.json)
    subprocess.run([str(CLINE.bin), "auth", "-p", "openai", "-k", "sk-mock-not-a-real-key",
                    "-m", "mock-model", "-b", f"http://127.0.0.1:{mock.port}/v1"],
                   cwd=proj, env={**os.environ, "HOME": str(home)}, check=True,
                   stdout=subprocess.DEVNULL, timeout=60)


DRIVER = common.Driver(CLINE, "Cline CLI", __doc__, Ctx, SESSIONS, common.openai_mock(20, 20), setup=setup,
                       cmd=lambda sess, proj: [str(CLINE.bin), "--auto-approve", "false"])

if __name__ == "__main__":
    DRIVER.main()
