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
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import Session  # noqa: E402

GROK = common.NpmRelease("grok", "@vibe-kit/grok-cli", "grok", pinned="0.0.34")
DIALOG_HINT = "Enter select • Esc cancel"   # a confirmation's key-hint row
WORKING = "esc to interrupt"                # the spinner row while a turn runs
COMPOSER = "auto-edit:"                     # the row under the input box


def is_idle(s: str) -> bool:
    return COMPOSER in s and WORKING not in s and DIALOG_HINT not in s


class Ctx(common.Ctx):
    release = GROK
    columns = (42, 22, 8)

    def wait_idle(self, timeout: float = 90) -> str:
        scr = self.wait(is_idle, "idle input box", timeout)
        self.rec.settle(0.8, timeout=10)
        return scr

    def wait_dialog(self, timeout: float = 60) -> str:
        scr = self.wait_text(DIALOG_HINT, timeout)
        self.rec.settle(0.6, timeout=10)
        return scr

    def wait_working(self, timeout: float = 60) -> str:
        return self.wait_text(WORKING, timeout)

    def prompt(self, text: str) -> None:
        self.wait_idle()
        self.rec.send(text, literal=True)
        time.sleep(0.5)
        self.submit(text, lambda m: WORKING in self.rec.screen() or DIALOG_HINT in self.rec.screen())

    def take(self, dest: Path, settle: float | None) -> dict:
        return self.take_matching(dest, settle)


def s_first_80(c: Ctx) -> None:
    c.wait_idle()
    c.shot("idle-start", "idle", "start", "fresh start: logo, tips, empty input box")
    c.prompt("the date parser has a bug with leap years, please fix it")
    c.wait_text("regression test?")
    c.wait_idle()
    c.shot("idle-reply-question", "idle", "reply-question",
           "reply ending 'Would you like me to add a regression test?'")
    c.prompt("please run `sleep 8; ls -la` now")
    c.wait_dialog()
    c.shot("blocked-command", "blocked", "shell-permission",
           "bash tool: 'Do you want to proceed with this operation?', '1. Yes' … '4. No, with feedback'")
    c.key("Enter")
    c.wait_working()
    time.sleep(3)
    c.shot("working-tool-running", "working", "tool-running", "approved '1. Yes'; the 8 s command runs",
           settle=None)
    c.wait_idle()
    c.shot("idle-after-approve", "idle", "after-approve", "the command finished; mock's final text")
    c.prompt("create src/cache_utils.py with a helper")
    c.wait_dialog()
    c.shot("blocked-edit", "blocked", "edit-permission", "create_file tool: the new file's diff and the question")
    c.key("Escape")
    c.wait_idle()
    c.shot("idle-after-reject-esc", "idle", "after-reject", "rejected the create with Esc")
    c.prompt("take your time and think about the cache layout")
    c.wait_working()
    time.sleep(3)
    c.shot("working-before-first-token", "working", "waiting-first-token",
           "mock holds the first token", settle=None)
    c.key("Escape")
    c.wait_idle()
    c.shot("idle-after-interrupt", "idle", "after-interrupt", "Esc while waiting for the first token")


def s_big_160(c: Ctx) -> None:
    c.wait_idle()
    c.shot("idle-start", "idle", "start", "fresh start at 160 columns")
    common.streamed_reply(c)
    c.prompt("write docs/NOTES.md with the release notes")
    c.wait_dialog()
    c.shot("blocked-edit", "blocked", "edit-permission", "create_file question (160 columns)")
    c.key("Enter")
    c.wait_idle()
    c.shot("idle-after-approve-edit", "idle", "after-approve", "allowed the create; file written")
    c.prompt("execute `mkdir -p build && date > build/stamp.txt` for me")
    c.wait_dialog()
    c.shot("blocked-command", "blocked", "shell-permission", "bash question (160 columns)")
    c.key("Down", "Down", "Down")
    c.rec.settle(0.4)
    c.shot("blocked-command-feedback-selected", "blocked", "shell-permission",
           "same question with '4. No, with feedback' selected")
    c.key("Enter")
    time.sleep(1.5)
    c.rec.settle(0.6)
    c.shot("blocked-feedback-input", "blocked", "reject-reason",
           "'4. No, with feedback' picked: Grok asks for the feedback text")
    # Esc did nothing here in 0.0.34 (despite 'or press Escape to go back'): type the feedback
    c.rec.send("skip the build stamp for now", literal=True)
    time.sleep(0.5)
    c.key("Enter")
    c.wait_idle()
    c.shot("idle-after-feedback", "idle", "after-reject",
           "typed the feedback and Enter: the command is rejected with it, the mock replies")


def s_mid_120(c: Ctx) -> None:
    c.wait_idle()
    common.delayed_reply(c)
    common.interrupted_stream(c, "Escape")
    c.prompt("execute `git status --short > status.txt` for me")
    c.wait_dialog()
    c.shot("blocked-command", "blocked", "shell-permission", "bash question (120 columns)")
    c.key("Down")
    c.rec.settle(0.4)
    c.shot("blocked-command-dont-ask-selected", "blocked", "shell-permission",
           "same question with '2. Yes, and don't ask again this session' selected")
    c.key("Enter")
    c.wait_idle()
    c.shot("idle-after-approve", "idle", "after-approve", "approved for the session; the command ran")


SESSIONS = [
    Session("first-80", 24, 80, project="webshop", run=s_first_80),
    Session("big-160", 48, 160, project="cache-service", run=s_big_160),
    Session("mid-120", 36, 120, project="ledger", run=s_mid_120),
]


def run_session(sess: Session, mock: common.Mock, only: str | None, index: dict) -> list[str]:
    base, home, proj = common.session_dirs("grok", sess)
    home.mkdir(parents=True)
    common.demo_project(proj)
    env = {"HOME": str(home), "GROK_BASE_URL": f"http://127.0.0.1:{mock.port}/v1",
           "GROK_API_KEY": "sk-mock-not-a-real-key", "GROK_MODEL": "mock-model", **common.tmux_env()}
    return common.run_session(sess, lambda rec: Ctx(sess, rec, only, index), sess.run,
                              base=base, home=home, cmd=[str(GROK.bin)], env=env, cwd=proj)


def main() -> None:
    common.npm_main(__doc__, GROK, SESSIONS, run_session, name="Grok CLI",
                    start_mock=lambda log: common.Mock("mock_openai.py", log, slow=20, delay=20))


if __name__ == "__main__":
    main()
