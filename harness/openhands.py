#!/usr/bin/env python3
"""Capture real OpenHands CLI fixtures against the mock OpenAI server.

    python harness/openhands.py install                 # pip install the pinned openhands
    python harness/openhands.py capture [--only NAME]   # run the scenarios, write fixtures/openhands/
    python harness/openhands.py list                    # the sessions
    python harness/openhands.py capture --version V     # another release: fixtures/openhands/V/

OpenHands CLI (PyPI `openhands`, which needs Python 3.12; `openhands-ai` is the server package
and has no CLI) is a Textual app in its own venv made by a Python 3.12 (pyenv's). Offline it talks
to harness/mock_openai.py through LiteLLM's `openai/<model>` provider: `--override-with-envs` with
LLM_MODEL=openai/mock-model, LLM_BASE_URL=http://127.0.0.1:PORT/v1 and LLM_API_KEY=<anything>
makes an agent without any saved settings. It calls POST /v1/chat/completions without streaming
(one JSON reply per step); its tools `terminal` and `file_editor` each require a `security_risk`,
which the mock fills in (its OpenHands hunk). LITELLM_LOCAL_MODEL_COST_MAP=True stops LiteLLM
trying (three times, ~8 s) to fetch its price map; OPENHANDS_SUPPRESS_BANNER=1 drops the SDK's
banner on stderr.

Without saved settings and without the env overrides it opens its first-run Settings form (a
real blocked screen): the `setup-*` sessions start that way, shoot the form and end. The `main-*`
sessions start with the env overrides and run the conversation.

The SDK runs the agent's commands in a tmux server of its own (`tmux -L openhands`, per user):
two runs at once would share it, so each session gets its own TMUX_TMPDIR under its throwaway
HOME, and that server is killed when the session ends (then every process naming HOME, by PID).

Screens (alternate screen, mouse tracking, no title of its own): the transcript, a spinner row
'⠋ Working (3s • ESC: pause)' while a turn runs (waiting for the model, a command running), the
input box '╭…╮ │ Type your message, @mention a file, or / for commands │ ╰…╯', a status row
'[Ctrl+L for multi-line • …]' and Textual's key footer. A confirmation (every action: command
or file edit) puts '🔍 Confirm 1 action(s)?' and the list '> Yes / No / Always / Auto LOW/MED'
(the selection is the '> ' text marker) into the transcript above the input box.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import Session  # noqa: E402


OPENHANDS = common.PipRelease("openhands", "openhands", "openhands", pinned="1.16.0", python="3.12")
SETTINGS = "Settings Mode:"                    # the first-run Settings form
INPUT = "Type your message, @mention a file"   # the input box's placeholder
READY = "What do you want to build?"           # the welcome text once the conversation exists
CONFIRM = "Confirm 1 action(s)?"               # a confirmation's header
WORKING = "ESC: pause)"                        # the spinner row while a turn runs


def is_idle(s: str) -> bool:
    return INPUT in s and WORKING not in s and CONFIRM not in s and "Pausing conversation" not in s


def is_working(s: str) -> bool:
    return WORKING in s


class Ctx(common.Ctx):
    release = OPENHANDS
    columns = (42, 22, 8)

    def wait_idle(self, timeout: float = 90) -> str:
        scr = self.wait(is_idle, "idle input box", timeout)
        self.rec.settle(0.8, timeout=10)
        return scr

    def wait_dialog(self, needle: str = CONFIRM, timeout: float = 60) -> str:
        scr = self.wait_text(needle, timeout)
        self.rec.settle(0.6, timeout=10)
        return scr

    def wait_working(self, timeout: float = 60) -> str:
        return self.wait(is_working, "working", timeout)

    def prompt(self, text: str) -> None:
        self.wait_idle()
        self.rec.send(text, literal=True)
        time.sleep(0.5)
        self.submit(text, lambda m: not is_idle(self.rec.screen()))

    def take(self, dest: Path, settle: float | None) -> dict:
        return self.take_matching(dest, settle)


def first_run(c: Ctx) -> None:
    """No saved settings, no env overrides: the first-run Settings form."""
    c.wait_text(SETTINGS, timeout=120)
    time.sleep(3)   # it takes keys only a while after it is drawn
    c.shot("blocked-first-run-settings", "blocked", "first-run-setup",
           "no saved settings: the Settings form (mode, provider, model, Save / Cancel)")


def approvals(c: Ctx) -> None:
    """Start, a command approved, a file edit rejected."""
    c.wait_text(READY, timeout=120)
    c.wait_idle()
    time.sleep(2)
    c.shot("idle-start", "idle", "start", "logo, 'All set up!', tips, the empty input box")
    c.prompt("please run `sleep 8; ls -la` now")
    c.wait_dialog()
    c.shot("blocked-command", "blocked", "shell-permission",
           "terminal: 'Confirm 1 action(s)?' with '> Yes / No / Always / Auto LOW/MED'")
    c.key("Enter")
    c.wait_working()
    time.sleep(3)
    c.shot("working-tool-running", "working", "tool-running",
           "approved 'Yes'; the 8 s command runs ('Working (Ns • ESC: pause)')", settle=None)
    c.wait_idle()
    c.shot("idle-after-approve", "idle", "after-approve", "the command finished; the mock's final text")
    c.prompt("create src/cache_utils.py with a helper")
    c.wait_dialog()
    c.shot("blocked-edit", "blocked", "edit-permission",
           "file_editor create: 'Confirm 1 action(s)?' under the edit's summary row")
    c.key("Down", "Enter")
    c.wait_idle()
    c.shot("idle-after-reject", "idle", "after-reject", "picked 'No' ('Action rejected'); the mock replied")


def waits(c: Ctx) -> None:
    """A held reply, then Esc while a command runs (a session of its own: the bytes stay small)."""
    c.wait_text(READY, timeout=120)
    c.wait_idle()
    time.sleep(2)
    c.prompt("please ponder whether the API needs pagination")
    c.wait_working()
    time.sleep(5)
    c.shot("working-before-first-token", "working", "waiting-first-token",
           "5 s into the mock's held reply (OpenHands does not stream)", settle=None)
    c.wait_idle()
    c.shot("idle-after-delayed-reply", "idle", "after-reply", "the delayed reply arrived")
    c.prompt("please run `sleep 20` now")
    c.wait_dialog()
    c.key("Enter")
    c.wait_working()
    time.sleep(3)
    c.key("Escape")
    c.wait_text("Pausing conversation", timeout=10)
    c.shot("working-pausing", "working", "interrupting",
           "Esc while a command runs: 'Pausing conversation' toast, the spinner row still up", settle=None)
    c.wait_idle(timeout=60)
    c.shot("idle-after-interrupt", "idle", "after-interrupt", "Esc while a command ran: paused")


SESSIONS = [
    Session("setup-80", 24, 80, project="webshop", run=first_run),
    Session("setup-120", 36, 120, project="ledger", run=first_run),
    Session("setup-160", 48, 160, project="cache-service", run=first_run),
    Session("main-80", 24, 80, project="webshop", run=approvals),
    Session("main-120", 36, 120, project="ledger", run=approvals),
    Session("main-160", 48, 160, project="cache-service", run=approvals),
    Session("wait-80", 24, 80, project="webshop", run=waits),
    Session("wait-120", 36, 120, project="ledger", run=waits),
    Session("wait-160", 48, 160, project="cache-service", run=waits),
]


def kill_sdk_tmux(tmpdir: Path) -> None:
    """The SDK's own `tmux -L openhands` server under this session's TMUX_TMPDIR."""
    if tmpdir.exists():
        subprocess.run(["tmux", "-L", "openhands", "kill-server"], capture_output=True,
                       env={**os.environ, "TMUX_TMPDIR": str(tmpdir)})


def run_session(sess: Session, mock: common.Mock, only: str | None, index: dict) -> list[str]:
    base, home, proj = common.session_dirs("openhands", sess)
    tmpdir = home / ".tmux"
    tmpdir.mkdir(parents=True)
    common.demo_project(proj)
    env = {"HOME": str(home), "TMUX_TMPDIR": str(tmpdir), "OPENHANDS_SUPPRESS_BANNER": "1",
           "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONWARNINGS": "ignore"}
    cmd = [str(OPENHANDS.bin)]
    if sess.run is not first_run:
        env.update(LLM_MODEL="openai/mock-model", LLM_BASE_URL=f"http://127.0.0.1:{mock.port}/v1",
                   LLM_API_KEY="dummy-key")
        cmd.append("--override-with-envs")
    env.update(common.tmux_env())

    def script(c: Ctx) -> None:
        try:
            sess.run(c)
        finally:  # before run_session's reap deletes HOME (and the socket with it)
            kill_sdk_tmux(tmpdir)

    return common.run_session(sess, lambda rec: Ctx(sess, rec, only, index), script,
                              base=base, home=home, cmd=cmd, env=env, cwd=proj)


def main() -> None:
    common.npm_main(__doc__, OPENHANDS, SESSIONS, run_session, name="OpenHands CLI",
                    start_mock=lambda log: common.Mock("mock_openai.py", log, slow=20, delay=15))


if __name__ == "__main__":
    main()
