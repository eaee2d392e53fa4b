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
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import Busy, Idle, Prompt, Session, Shot, Sleep, WaitText, Working, ask, keys  # noqa: E402


OPENHANDS = common.PipRelease("openhands", "openhands", "openhands", pinned="1.16.0", python="3.12")
SETTINGS = "Settings Mode:"                    # the first-run Settings form
INPUT = "Type your message, @mention a file"   # the input box's placeholder
READY = "What do you want to build?"           # the welcome text once the conversation exists
CONFIRM = "Confirm 1 action(s)?"               # a confirmation's header
WORKING = "ESC: pause)"                        # the spinner row while a turn runs


def is_idle(s: str) -> bool:
    return INPUT in s and WORKING not in s and CONFIRM not in s and "Pausing conversation" not in s


class Ctx(common.Ctx):
    release = OPENHANDS
    columns = (42, 22, 8)
    is_idle = staticmethod(is_idle)
    is_working = staticmethod(lambda s: WORKING in s)
    started = staticmethod(lambda s: not is_idle(s))
    dialog = CONFIRM
    take_mode = "matching"


FIRST_RUN = [  # no saved settings, no env overrides: the first-run Settings form
    WaitText(SETTINGS, timeout=120),
    Sleep(3),   # it takes keys only a while after it is drawn
    Shot("blocked-first-run-settings", "first-run-setup",
         "no saved settings: the Settings form (mode, provider, model, Save / Cancel)"),
]

READY_STEPS = [WaitText(READY, timeout=120), Idle(), Sleep(2)]   # the conversation exists, idle

APPROVALS = [  # start, a command approved, a file edit rejected
    READY_STEPS,
    Shot("idle-start", "start", "logo, 'All set up!', tips, the empty input box"),
    ask("please run `sleep 8; ls -la` now", "blocked-command", "shell-permission",
        "terminal: 'Confirm 1 action(s)?' with '> Yes / No / Always / Auto LOW/MED'", ("Enter",)),
    Working("working-tool-running", "tool-running",
            "approved 'Yes'; the 8 s command runs ('Working (Ns • ESC: pause)')"),
    Idle("idle-after-approve", "after-approve", "the command finished; the mock's final text"),
    ask("create src/cache_utils.py with a helper", "blocked-edit", "edit-permission",
        "file_editor create: 'Confirm 1 action(s)?' under the edit's summary row", ("Down", "Enter")),
    Idle("idle-after-reject", "after-reject", "picked 'No' ('Action rejected'); the mock replied"),
]

WAITS = [  # a held reply, then Esc while a command runs (a session of its own: the bytes stay small)
    READY_STEPS,
    Prompt("please ponder whether the API needs pagination"),
    Working("working-before-first-token", "waiting-first-token",
            "5 s into the mock's held reply (OpenHands does not stream)", delay=5),
    Idle("idle-after-delayed-reply", "after-reply", "the delayed reply arrived"),
    Prompt("please run `sleep 20` now"),
    lambda c: c.wait_dialog(),
    keys("Enter"),
    Busy(3),
    keys("Escape"),
    WaitText("Pausing conversation", timeout=10),
    Shot("working-pausing", "interrupting",
         "Esc while a command runs: 'Pausing conversation' toast, the spinner row still up", settle=None),
    Idle("idle-after-interrupt", "after-interrupt", "Esc while a command ran: paused", timeout=60),
]


@dataclass
class OHSession(Session):
    configured: bool = True   # the env overrides (--override-with-envs); False: the first-run form


def kill_sdk_tmux(tmpdir: Path) -> None:
    """The SDK's own `tmux -L openhands` server under this session's TMUX_TMPDIR."""
    if tmpdir.exists():
        subprocess.run(["tmux", "-L", "openhands", "kill-server"], capture_output=True,
                       env={**os.environ, "TMUX_TMPDIR": str(tmpdir)})


def sdk_tmux_killed(steps: list):
    """The steps, then (whatever happens) the SDK's tmux server killed: before run_session's
    reap deletes HOME (and the socket with it)."""
    def run(c: Ctx) -> None:
        try:
            common.run_steps(c, steps)
        finally:
            kill_sdk_tmux(c.proj.parent / "home" / ".tmux")
    return run


SESSIONS = [*common.sized(sdk_tmux_killed(FIRST_RUN), "setup", OHSession, configured=False),
            *common.sized(sdk_tmux_killed(APPROVALS), "main", OHSession),
            *common.sized(sdk_tmux_killed(WAITS), "wait", OHSession)]


def setup(d: common.Driver, sess: OHSession, home: Path, proj: Path, mock: common.Mock) -> None:
    (home / ".tmux").mkdir(parents=True)   # TMUX_TMPDIR: the SDK's tmux server of this session
    common.demo_project(proj)


def env(sess: OHSession, home: Path, proj: Path, mock: common.Mock) -> dict:
    e = {"HOME": str(home), "TMUX_TMPDIR": str(home / ".tmux"), "OPENHANDS_SUPPRESS_BANNER": "1",
         "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONWARNINGS": "ignore"}
    if sess.configured:
        e.update(LLM_MODEL="openai/mock-model", LLM_BASE_URL=f"http://127.0.0.1:{mock.port}/v1",
                 LLM_API_KEY="dummy-key")
    return e


DRIVER = common.Driver(
    OPENHANDS, "OpenHands CLI", __doc__, Ctx, SESSIONS, common.openai_mock(20, 15), setup=setup, env=env,
    cmd=lambda sess, proj: [str(OPENHANDS.bin), *(["--override-with-envs"] if sess.configured else [])])

if __name__ == "__main__":
    DRIVER.main()
