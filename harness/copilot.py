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
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import Session  # noqa: E402

COPILOT = common.NpmRelease("copilot", "@github/copilot", "copilot", pinned="1.0.102")
# the key-hint row every question ends with: '↑/↓ to navigate · enter to select · esc to cancel'
# (trust, shell, edit) or '↑/↓ select · enter accept · ctrl+d decline · esc cancel' (ask_user)
DIALOG_HINT = re.compile(r"^[\s│]*↑/↓ .*· esc (to )?\w+[\s│]*$", re.M)
WORKING = " Working "             # the footer during a turn ('○ Working · 99 B esc esc interrupt')


def working(screen: str) -> bool:
    """The footer (the last non-empty row) says a turn runs."""
    rows = [r for r in screen.splitlines() if r.strip()]
    return bool(rows) and WORKING in rows[-1]


class Ctx(common.Ctx):
    release = COPILOT
    columns = (42, 22, 8)

    def __init__(self, sess: Session, rec, proj: Path, only: str | None, index: dict):
        super().__init__(sess, rec, only, index)
        self.proj = proj

    def wait_idle(self, timeout: float = 90) -> str:
        scr = self.wait(lambda s: "Interactive ·" in s and not working(s) and not DIALOG_HINT.search(s),
                        "idle footer", timeout)
        self.rec.settle(0.8, timeout=10)
        return scr

    def wait_dialog(self, timeout: float = 60) -> str:
        scr = self.wait(lambda s: DIALOG_HINT.search(s), "a dialog", timeout)
        self.rec.settle(0.6, timeout=10)
        return scr

    def wait_working(self, timeout: float = 60) -> str:
        return self.wait(working, "working footer", timeout)

    def prompt(self, text: str) -> None:
        self.wait_idle()
        self.rec.send(text, literal=True)
        time.sleep(0.5)
        # the footer is redrawn cell by cell (styles between words): read tmux's screen, not bytes
        self.submit(text, lambda m: working(self.rec.screen()) or DIALOG_HINT.search(self.rec.screen()))

    def take(self, dest: Path, settle: float | None) -> dict:
        return self.rec.snapshot_quiet(dest, settle=settle)


def trust(c: Ctx) -> None:
    c.wait_text("Confirm folder trust", timeout=60)
    c.rec.settle(1.0, timeout=10)
    c.shot("blocked-trust", "blocked", "trust",
           "first start in the folder: 'Confirm folder trust' dialog, '❯ 1. Yes'")
    c.key("Enter")
    c.wait_idle()


def s_first_80(c: Ctx) -> None:
    trust(c)
    c.shot("idle-start", "idle", "start", "trusted with Enter: banner, tips, empty input")
    c.prompt("please run `sleep 8; ls -la` now")
    c.wait_text("Do you want to run this command?")
    c.wait_dialog()
    c.shot("blocked-command", "blocked", "shell-permission", "bash tool: 'Do you want to run this command?'")
    c.key("Enter")
    c.wait_working()
    time.sleep(2.5)
    c.shot("working-tool-running", "working", "tool-running", "approved '1. Yes'; the 8 s command runs",
           settle=None)
    c.wait_idle()
    c.shot("idle-after-approve", "idle", "after-approve", "the command finished; mock's final text")
    c.prompt("the date parser has a bug with leap years, please fix it")
    c.wait_text("regression test?")
    c.wait_idle()
    c.shot("idle-reply-question", "idle", "reply-question",
           "reply ending 'Would you like me to add a regression test?'")
    c.prompt(f"create {c.proj}/src/cache_utils.py with a helper")
    c.wait_dialog()
    c.shot("blocked-edit", "blocked", "edit-permission", "create tool: the new file's diff and its question")
    c.key("Escape")
    c.wait_idle()
    c.shot("idle-after-reject-esc", "idle", "after-reject", "rejected the create with Esc")
    c.prompt("take your time and think about the cache layout")
    c.wait_working()
    time.sleep(3)
    c.shot("working-before-first-token", "working", "waiting-first-token",
           "mock holds the first token", settle=None)
    c.key("Escape", "Escape")
    c.wait_idle()
    c.shot("idle-after-interrupt", "idle", "after-interrupt", "Esc Esc while waiting for the first token")


def s_big_160(c: Ctx) -> None:
    trust(c)
    c.shot("idle-start", "idle", "start", "fresh start at 160 columns")
    common.streamed_reply(c)
    c.prompt(f"write {c.proj}/docs/NOTES.md with the release notes")
    c.wait_dialog()
    c.shot("blocked-edit", "blocked", "edit-permission", "create tool question (160 columns)")
    c.key("Enter")
    c.wait_idle()
    c.shot("idle-after-approve-edit", "idle", "after-approve", "allowed the create; file written")
    c.prompt("execute `mkdir -p build && date > build/stamp.txt` for me")
    c.wait_text("Do you want to run this command?")
    c.wait_dialog()
    c.shot("blocked-command", "blocked", "shell-permission", "bash tool question (160 columns)")
    c.key("Down", "Down")
    c.rec.settle(0.4)
    c.shot("blocked-command-no-selected", "blocked", "shell-permission",
           "same dialog with '3. No, and tell Copilot what to do differently' selected")
    # Enter on '3. No…' left the dialog up (seen twice in 1.0.102); Esc is its documented way out
    c.key("Escape")
    c.wait_idle()
    c.shot("idle-after-reject-esc", "idle", "after-reject", "rejected the command with Esc")
    c.prompt("let me choose between two designs for the cache layer first")
    c.wait_dialog()
    c.shot("blocked-question", "blocked", "question", "ask_user tool: the elicitation form")
    c.key("Escape")
    c.wait_idle()
    c.shot("idle-after-dismiss", "idle", "after-reject", "dismissed the question with Esc")


def s_mid_120(c: Ctx) -> None:
    trust(c)
    common.delayed_reply(c)
    common.interrupted_stream(c, "Escape", "Escape")
    c.prompt("before touching the logger, ask me which option you should use")
    c.wait_dialog()
    c.shot("blocked-question", "blocked", "question", "ask_user form (120 columns)")


SESSIONS = [
    Session("first-80", 24, 80, project="webshop", run=s_first_80),
    Session("big-160", 48, 160, project="cache-service", run=s_big_160),
    Session("mid-120", 36, 120, project="ledger", run=s_mid_120),
]


def run_session(sess: Session, mock: common.Mock, only: str | None, index: dict) -> list[str]:
    base, home, proj = common.session_dirs("copilot", sess)
    (home / ".copilot").mkdir(parents=True)
    common.demo_project(proj)
    env = {"HOME": str(home), "COPILOT_HOME": str(home / ".copilot"), "COPILOT_OFFLINE": "true",
           "COPILOT_PROVIDER_BASE_URL": f"http://127.0.0.1:{mock.port}/v1",
           "COPILOT_PROVIDER_API_KEY": "sk-mock-not-a-real-key", "COPILOT_MODEL": "mock-model",
           "COPILOT_AUTO_UPDATE": "false", **common.tmux_env()}
    return common.run_session(sess, lambda rec: Ctx(sess, rec, proj, only, index), sess.run,
                              base=base, home=home, cmd=[str(COPILOT.bin)], env=env, cwd=proj)


def main() -> None:
    common.npm_main(__doc__, COPILOT, SESSIONS, run_session, name="GitHub Copilot CLI",
                    start_mock=lambda log: common.Mock("mock_openai.py", log, slow=20, delay=20))


if __name__ == "__main__":
    main()
