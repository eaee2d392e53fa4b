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
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import Session  # noqa: E402

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

    def __init__(self, sess: Session, rec, proj: Path, only: str | None, index: dict):
        super().__init__(sess, rec, only, index)
        self.proj = proj

    def wait_idle(self, timeout: float = 90) -> str:
        scr = self.wait(is_idle, "idle input box", timeout)
        self.rec.settle(0.8, timeout=10)
        return scr

    def wait_dialog(self, needle: str = PERMISSION, timeout: float = 60) -> str:
        scr = self.wait_text(needle, timeout)
        self.rec.settle(0.6, timeout=10)
        return scr

    def wait_working(self, timeout: float = 60) -> str:
        return self.wait(working, "a running entry", timeout)

    def prompt(self, text: str) -> None:
        self.wait_idle()
        self.rec.send(text, literal=True)
        time.sleep(0.5)
        self.submit(text, lambda m: working(self.rec.screen()) or dialog(self.rec.screen()))

    def take(self, dest: Path, settle: float | None) -> dict:
        return self.take_matching(dest, settle)


def close_promo(c: Ctx, shoot: bool = False) -> None:
    c.wait_text(PROMO, timeout=60)
    c.rec.settle(1.0, timeout=10)
    if shoot:
        c.shot("idle-start-promo", "idle", "start",
               "first start: a promotion over the input ('Press Enter to open, any other key to "
               "close'); nothing asked of the agent's work")
    c.key("Escape")


def s_first_80(c: Ctx) -> None:
    close_promo(c, shoot=True)
    c.wait_idle()
    c.shot("idle-start", "idle", "start", "promotion closed with Esc: logo, 'What can I do for you?'")
    c.prompt("the date parser has a bug with leap years, please fix it")
    c.wait_text("regression test?")
    c.wait_idle()
    c.shot("idle-reply-question", "idle", "reply-question",
           "reply ending 'Would you like me to add a regression test?'")
    c.prompt("please run `sleep 8; ls -la` now")
    c.wait_dialog()
    c.shot("blocked-command", "blocked", "shell-permission",
           "run_commands: 'Cline needs permission / Approve tool call?', '[y] Approve   [n] Deny'")
    c.key("y")
    time.sleep(3)
    c.shot("working-tool-running", "working", "tool-running", "approved with y; the 8 s command runs",
           settle=None)
    c.wait_idle()
    c.shot("idle-after-approve", "idle", "after-approve", "the command finished; mock's final text")
    c.prompt(f"create {c.proj}/src/cache_utils.py with a helper")
    c.wait_dialog()
    c.shot("blocked-edit", "blocked", "edit-permission", "editor tool: 'Approve tool call?' naming the file")
    c.key("n")
    c.wait_idle()
    c.shot("idle-after-reject", "idle", "after-reject", "denied the edit with n")
    c.prompt("take your time and think about the cache layout")
    c.wait_working()
    time.sleep(3)
    c.shot("working-before-first-token", "working", "waiting-first-token",
           "mock holds the first token: '⠇ Thinking... (esc to cancel)'", settle=None)
    c.key("Escape")
    c.wait_idle()
    c.shot("idle-after-interrupt", "idle", "after-interrupt", "Esc while waiting for the first token")


def s_big_160(c: Ctx) -> None:
    close_promo(c)
    c.wait_idle()
    c.shot("idle-start", "idle", "start", "fresh start at 160 columns, promotion closed")
    c.prompt("let me choose between two designs for the cache layer first")
    c.wait_dialog(QUESTION)
    c.shot("blocked-question", "blocked", "question",
           "ask_question tool: 'Cline is asking a question', options, 'Type a response...'")
    c.key("Enter")
    c.wait_idle()
    c.shot("idle-after-question-answered", "idle", "after-reply", "picked the first option with Enter")
    common.streamed_reply(c)
    c.prompt(f"write {c.proj}/docs/NOTES.md with the release notes")
    c.wait_dialog()
    c.shot("blocked-edit", "blocked", "edit-permission", "editor tool permission (160 columns)")
    c.key("y")
    c.wait_idle()
    c.shot("idle-after-approve-edit", "idle", "after-approve", "approved the write with y")


def s_mid_120(c: Ctx) -> None:
    close_promo(c)
    c.wait_idle()
    common.delayed_reply(c)
    common.interrupted_stream(c, "Escape")
    c.prompt("execute `git status --short > status.txt` for me")
    c.wait_dialog()
    c.shot("blocked-command", "blocked", "shell-permission", "run_commands permission (120 columns)")
    c.key("Escape")
    c.wait_idle()
    c.shot("idle-after-reject-esc", "idle", "after-reject", "Esc on the permission")
    c.prompt("before touching the logger, ask me which option you should use")
    c.wait_dialog(QUESTION)
    c.shot("blocked-question", "blocked", "question", "ask_question (120 columns)")
    c.key("Escape")
    c.wait_idle()
    c.shot("idle-after-dismiss", "idle", "after-reject", "Esc on the question")


SESSIONS = [
    Session("first-80", 24, 80, project="webshop", run=s_first_80),
    Session("big-160", 48, 160, project="cache-service", run=s_big_160),
    Session("mid-120", 36, 120, project="ledger", run=s_mid_120),
]


def make_dirs(home: Path, proj: Path, port: int) -> None:
    home.mkdir(parents=True)
    common.demo_project(proj)
    # Cline's own way to point a provider at an endpoint (it writes providers.json)
    subprocess.run([str(CLINE.bin), "auth", "-p", "openai", "-k", "sk-mock-not-a-real-key",
                    "-m", "mock-model", "-b", f"http://127.0.0.1:{port}/v1"],
                   cwd=proj, env={**os.environ, "HOME": str(home)}, check=True,
                   stdout=subprocess.DEVNULL, timeout=60)


def run_session(sess: Session, mock: common.Mock, only: str | None, index: dict) -> list[str]:
    base, home, proj = common.session_dirs("cline", sess)
    make_dirs(home, proj, mock.port)
    env = {"HOME": str(home), **common.tmux_env()}
    return common.run_session(sess, lambda rec: Ctx(sess, rec, proj, only, index), sess.run,
                              base=base, home=home, cmd=[str(CLINE.bin), "--auto-approve", "false"],
                              env=env, cwd=proj)


def main() -> None:
    common.npm_main(__doc__, CLINE, SESSIONS, run_session, name="Cline CLI",
                    start_mock=lambda log: common.Mock("mock_openai.py", log, slow=20, delay=20))


if __name__ == "__main__":
    main()
