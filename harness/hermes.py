#!/usr/bin/env python3
"""Capture real Hermes Agent fixtures (both front ends) against the mock OpenAI server.

    python harness/hermes.py install                 # pip install the pinned hermes-agent in a venv
    python harness/hermes.py capture [--only NAME]   # run the scenarios, write fixtures/hermes/
    python harness/hermes.py list                    # the sessions
    python harness/hermes.py capture --version V     # another release: fixtures/hermes/V/

Hermes Agent (PyPI `hermes-agent`, Nous Research) is a Python console script (it needs Python
>=3.11,<3.14: the venv is made by pyenv's 3.12). It runs offline with a throwaway HOME whose
~/.hermes/config.yaml names a custom OpenAI-compatible provider (`model.provider: custom`,
`base_url` = harness/mock_openai.py) and `approvals.mode: manual` (every dangerous command asks;
Hermes asks only for commands its pattern list calls dangerous, such as `rm -rf`, so the command
prompts here delete a folder that does not exist). HERMES_DISABLE_LAZY_INSTALLS=1 stops it
pip-installing optional extras (edge-tts) at start. It calls POST /v1/chat/completions (streamed)
with its tools (`terminal`, `clarify`, `write_file`, …) and a title side call after the first turn.

Two front ends, each captured at 80x24, 120x36 and 160x48 (COLSxROWS):
- the classic REPL (prompt_toolkit, main screen): a status bar (' ⚕ model │ ctx … │ ⏱ 4s'), the
  input row between two rules ('❯', '⚕ ❯ msg=interrupt · … · Ctrl+C cancel' while a turn runs,
  '⚠ ❯' / '? ❯' while a dialog waits); a dangerous command opens a box ('⚠️  Dangerous Command',
  '❯ 1. Allow once' … '4. Deny') over '↑/↓ to select, Enter to confirm  (55s)';
- `--tui` (an Ink app: `node …/hermes_cli/tui_dist/entry.js` under the Python process, with a
  `python -m tui_gateway.entry` child): a status row (' ─ ready │ mock model │ 8s │ …'), the
  input row ' ❯ …' ('Ctrl+C to interrupt…' while a turn runs) and double-line dialog boxes
  ('║ ↑/↓ select · Enter confirm · 1-4 quick pick · Esc/Ctrl+C deny ║').
Fixture names: <COLS>x<ROWS>-<state> (classic) and <COLS>x<ROWS>-tui-<state> (--tui). The
first-* sessions start with no config.yaml: 'Run setup now? [Y/n]', then (y) the setup menu.

Processes: after each session the private tmux server is killed and then, by PID, every process
whose command line or environment names the session's unique HOME (never by process name).
"""
from __future__ import annotations

import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import Session, Shot, WaitText, keys  # noqa: E402


HERMES = common.PipRelease("hermes", "hermes-agent", "hermes", pinned="0.19.0", python="3.12")

# classic REPL: the input row's prompt glyph says what the REPL waits for
C_IDLE = re.compile(r"^❯( |$)", re.M)                        # the bare prompt: waiting for a message
C_WORKING = re.compile(r"^⚕ ❯ ", re.M)                       # a turn runs (the row goes on: msg=interrupt …)
C_CHOOSE = "↑/↓ to select, Enter to confirm"                 # an approval's / question's key row
C_CONFIRM = "Type 1/2/3"                                     # a slash command's confirmation
# --tui: the status row and the input row
T_IDLE = re.compile(r"^ ─ ready │", re.M)
T_WORKING = "Ctrl+C to interrupt"
T_APPROVAL = "Esc/Ctrl+C deny"


@dataclass
class HSession(Session):
    tui: bool = False


def c_idle(s: str) -> bool:
    tail = "\n".join(s.rstrip("\n").split("\n")[-4:])
    return bool(C_IDLE.search(tail)) and not C_WORKING.search(s) and C_CHOOSE not in s and C_CONFIRM not in s


def t_idle(s: str) -> bool:
    # (no '║' test: the logo's block letters hold box characters too)
    return bool(T_IDLE.search(s)) and T_WORKING not in s and T_APPROVAL not in s and "Enter confirm" not in s


class Ctx(common.Ctx):
    release = HERMES
    columns = (40, 22, 8)
    idle_what = "idle input row"
    type_pause = 0.6
    take_mode = "matching"

    @property
    def tui(self) -> bool:
        return self.s.tui

    def is_idle(self, s: str) -> bool:
        return t_idle(s) if self.tui else c_idle(s)

    def is_working(self, s: str) -> bool:
        return T_WORKING in s if self.tui else bool(C_WORKING.search(s))

    def started(self, s: str) -> bool:
        return not self.is_idle(s)

    @property
    def dialog(self) -> str:
        return T_APPROVAL if self.tui else C_CHOOSE

    def shot(self, suffix: str, state: str, kind: str, how: str, settle=common._SETTLE) -> None:
        front = "--tui" if self.tui else "classic REPL"
        super().shot(("tui-" if self.tui else "") + suffix, state, kind, f"{front}: {how}", settle)


def all_states(c: Ctx) -> None:
    """Every state this driver reaches, at the session's size, in either front end."""
    deny = ["Escape"] if c.tui else ["C-c"]   # the classic REPL's approval takes no Esc
    c.wait_idle(timeout=120)
    c.shot("idle-start", "idle", "start", "the banner (tools, skills), the empty input row")
    c.prompt("please run `sleep 8; rm -rf build` now")
    c.wait_dialog()
    c.shot("blocked-command", "blocked", "shell-permission",
           "a dangerous command (recursive delete): '1. Allow once' … '4. Deny'")
    c.key("1")
    c.wait_working()
    time.sleep(3)
    c.shot("working-tool-running", "working", "tool-running",
           "approved with '1' (Allow once); the 8 s command runs", settle=None)
    c.wait_idle()
    c.shot("idle-after-approve", "idle", "after-approve", "the command finished; the mock's final text")
    c.prompt("please run `rm -rf dist` now")
    c.wait_dialog()
    c.key(*deny)
    c.wait_idle()
    c.shot("idle-after-reject", "idle", "after-reject",
           f"denied the next dangerous command with {'Esc' if c.tui else 'Ctrl+C'}")
    c.prompt("ask me which option to use")
    c.wait_dialog("Which approach should I take")
    time.sleep(1)
    c.shot("blocked-question", "blocked", "question",
           "the clarify tool: a question, '1. Minimal fix' / '2. Refactor module' / 'Other'")
    c.key("Enter")
    c.wait_idle()
    c.shot("idle-after-answer", "idle", "after-answer", "picked the first choice with Enter")
    common.delayed_reply(c)
    common.interrupted_stream(c, "C-c")
    c.prompt("/clear")
    try:
        c.wait(lambda s: not c.is_idle(s) and not c.is_working(s) and "Cancel" in s,
               "the /clear confirmation", 15)
    except TimeoutError:
        print("  (no /clear confirmation in this front end)")
        return
    c.rec.settle(0.6, timeout=10)
    c.shot("blocked-slash-confirm", "blocked", "confirm",
           "/clear asks first: Approve Once / Always Approve / Cancel")
    c.key("Escape")
    c.wait_idle()
    c.shot("idle-after-cancel", "idle", "after-reject", "cancelled the /clear confirmation with Esc")


FIRST_RUN = [  # no config.yaml: Hermes asks to run its setup, then offers a setup menu (Esc ends it)
    WaitText("[Y/n]", timeout=120, settle=0.8),
    Shot("blocked-first-run", "first-run", "no provider configured: 'Run setup now? [Y/n]' (n exits Hermes)"),
    keys("y", "Enter"),
    WaitText("ENTER/SPACE select", settle=0.8),
    Shot("blocked-setup-menu", "first-run",
         "'How would you like to set up Hermes?': Quick Setup / Full setup / Blank Slate"),
]


SESSIONS = [*common.sized(all_states, "classic", HSession),
            *common.sized(FIRST_RUN, "first", HSession),
            *common.sized(all_states, "tui", HSession, tui=True)]


def config(port: int) -> str:
    return (f"model:\n  provider: custom\n  default: mock-model\n"
            f"  base_url: http://127.0.0.1:{port}/v1\n  api_key: dummy-key\n"
            "approvals:\n  mode: manual\n  timeout: 300\n")


def setup(d: common.Driver, sess: HSession, home: Path, proj: Path, mock: common.Mock) -> None:
    """HOME with ~/.hermes/config.yaml (none for the first-run sessions) and the git project."""
    (home / ".hermes").mkdir(parents=True)
    if sess.run is not FIRST_RUN:
        (home / ".hermes" / "config.yaml").write_text(config(mock.port))
    common.demo_project(proj)


DRIVER = common.Driver(
    HERMES, "Hermes Agent", __doc__, Ctx, SESSIONS, common.openai_mock(15, 12), setup=setup,
    env=lambda sess, home, proj, mock: {"HOME": str(home), "HERMES_DISABLE_LAZY_INSTALLS": "1"},
    cmd=lambda sess, proj: [str(HERMES.bin)] + (["--tui"] if sess.tui else []))

if __name__ == "__main__":
    DRIVER.main()
