#!/usr/bin/env python3
"""Capture real Kimi CLI fixtures against the mock OpenAI server.

    python harness/kimi.py install                 # a venv with the pinned kimi-cli (Python 3.13)
    python harness/kimi.py capture [--only NAME]   # run the scenarios, write fixtures/kimi/
    python harness/kimi.py list                    # the sessions
    python harness/kimi.py capture --version V     # another release: fixtures/kimi/V/

Kimi CLI (PyPI `kimi-cli`, binary `kimi`, Python >= 3.13) runs with no Moonshot login from a
throwaway HOME whose `~/.kimi/config.toml` names one provider of type `openai_legacy` (OpenAI
chat completions) whose base_url is harness/mock_openai.py, and one model of it as the default.
It calls POST /v1/chat/completions (streamed) with its tools Shell (a command approval),
WriteFile (an edit approval) and AskUserQuestion (a question box), driven by the mock's keyword
scenarios. The default mode asks before every command and every write.

The TUI (prompt_toolkit) draws on the main screen: the transcript, then '── input ──…', the
input rows, a rule, the mode row 'agent (<model> ○)  <dir>  <branch>  <tips>' and the context
row '… context: 0.0% (0/128k)'. A turn shows a spinner row above the input: a moon
('🌑') while waiting for the first token, '<braille> Composing... 4s · 36 tokens' while the reply
is generated (the text itself is drawn once a paragraph is complete), '<braille> Using Shell
(<command>)' while a tool runs. An approval is a box '╭─ approval ─…' with '→ [1] Approve once'
… '[4] Reject, tell the model what to do instead' and the key row '▲/▼ select  1/2/3/4 choose
↵ confirm'; a question is a box '╭─ question ─…' with '→ [1] <option>' … '[n] Other'. A digit
picks a choice at once (no Enter). Esc interrupts a turn.

Processes: `bin/kimi` is a Python script; once started it renames itself with setproctitle, so
ps's comm and argv[0] are both 'Kimi Code' (tmux's pane_current_command shows 'Kimi'). After
each session the private tmux server is killed and then, by PID, every process whose command
line or environment names the session's unique HOME (never by process name).

Releases: 1.52.0 (the newest) is an end-of-life stub (started bare it runs a web install
script): never run it. 1.51.0 is the last real release, pinned here.
"""
from __future__ import annotations

import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import Session  # noqa: E402


KIMI = common.PipRelease("kimi", "kimi-cli", "kimi", pinned="1.51.0", python="3.13")
INPUT = "── input ─"                       # the rule above the input rows (idle and working)
APPROVAL = "╭─ approval ─"                  # a command / file approval's box
QUESTION = "╭─ question ─"                  # AskUserQuestion's box
SPINNER = re.compile(r"^[\u2800-\u28ff] \S|^[🌑🌒🌓🌔🌕🌖🌗🌘]\s*$", re.M)  # a turn's spinner row


def is_working(s: str) -> bool:
    return bool(SPINNER.search(s)) and APPROVAL not in s and QUESTION not in s


def is_idle(s: str) -> bool:
    return INPUT in s and "context: " in s and not SPINNER.search(s)


class Ctx(common.Ctx):
    release = KIMI
    columns = (42, 22, 8)

    def wait_idle(self, timeout: float = 90) -> str:
        scr = self.wait(is_idle, "idle input", timeout)
        self.rec.settle(0.8, timeout=10)
        return scr

    def wait_dialog(self, needle: str = APPROVAL, timeout: float = 60) -> str:
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


# ---- the scenario, as data: (prompt, dialog box, answer key, [shots]) ----------------------------
# each shot: (when, suffix, state, kind, how); `when` is "dialog" (the box is up), "running"
# (3 s after the answer, the turn still going) or "after" (idle again)
DIALOGS = [
    ("please run `sleep 8; ls -la` now", APPROVAL, "1", [
        ("dialog", "blocked-command", "blocked", "shell-permission",
         "Shell: 'Shell is requesting approval to run command', '→ [1] Approve once' … '[4] Reject, "
         "tell the model what to do instead'"),
        ("running", "working-tool-running", "working", "tool-running",
         "approved with '1'; the 8 s command runs ('Using Shell (…)')"),
        ("after", "idle-after-approve", "idle", "after-approve", "the command finished; mock's final text")]),
    ("create src/cache_utils.py with a helper", APPROVAL, "3", [
        ("dialog", "blocked-edit", "blocked", "edit-permission",
         "WriteFile: 'requesting approval to edit file', the new file's lines and the choices"),
        ("after", "idle-after-reject", "idle", "after-reject", "rejected with '3' ('Rejected by user')")]),
    ("ask me which option to use", QUESTION, "1", [
        ("dialog", "blocked-question", "blocked", "question",
         "AskUserQuestion: the question, '→ [1] Minimal fix', '[2] Refactor module', '[3] Other'"),
        ("after", "idle-after-answer", "idle", "after-answer", "picked '1'; the mock replied")]),
]


def dialog_turn(c: Ctx, prompt: str, box: str, key: str, shots: list) -> None:
    c.prompt(prompt)
    c.wait_dialog(box)
    for when, suffix, state, kind, how in shots:
        if when == "dialog":
            c.shot(suffix, state, kind, how)
            c.key(key)
        elif when == "running":
            c.wait_working()
            time.sleep(3)
            c.shot(suffix, state, kind, how, settle=None)
        else:
            c.wait_idle()
            c.shot(suffix, state, kind, how)


def composing(c: Ctx, prompt: str, how: str | None) -> None:
    """A slow streamed reply: Kimi draws a paragraph once it is complete, so the screen while it
    streams is the 'Composing… <n> tokens' spinner row; shot 4 s in (unless `how` is None)."""
    c.prompt(prompt)
    c.wait_text("Composing")
    time.sleep(4)
    if how:
        c.shot("working-streaming", "working", "streaming", how, settle=None)


def all_states(c: Ctx) -> None:
    """Every state this driver reaches, at the session's size (the interrupt last: Kimi sends
    an interrupted turn's prompt again, joined to the next one)."""
    c.wait_idle()
    time.sleep(1.5)   # keys typed while it still loads are dropped
    c.shot("idle-start", "idle", "start", "started: welcome box, empty input, mode and context rows")
    for prompt, box, key, shots in DIALOGS:
        dialog_turn(c, prompt, box, key, shots)
    common.delayed_reply(c)
    composing(c, "walk me through the scheduler slowly", "slow streamed reply, 4 s in ('Composing...')")
    c.wait_idle()
    c.shot("idle-after-reply", "idle", "after-reply", "the slow reply finished")
    composing(c, "explain the token refresh flow in detail", None)
    c.key("Escape")
    c.wait_idle()
    c.shot("idle-after-interrupt-stream", "idle", "after-interrupt",
           "Esc while the reply streamed ('Interrupted by user')")


SESSIONS = [
    Session("first-80", 24, 80, project="webshop", run=all_states),
    Session("mid-120", 36, 120, project="ledger", run=all_states),
    Session("big-160", 48, 160, project="cache-service", run=all_states),
]


def config(port: int) -> str:
    return f"""default_model = "mock"
telemetry = false

[providers.mock]
type = "openai_legacy"
base_url = "http://127.0.0.1:{port}/v1"
api_key = "sk-mock-key"

[models.mock]
provider = "mock"
model = "mock-model"
max_context_size = 128000
"""


def run_session(sess: Session, mock: common.Mock, only: str | None, index: dict) -> list[str]:
    base, home, proj = common.session_dirs("kimi", sess)
    (home / ".kimi").mkdir(parents=True)
    (home / ".kimi" / "config.toml").write_text(config(mock.port))
    common.demo_project(proj)
    env = {"HOME": str(home), **common.tmux_env()}
    return common.run_session(sess, lambda rec: Ctx(sess, rec, only, index), sess.run,
                              base=base, home=home, cmd=[str(KIMI.bin)], env=env, cwd=proj)


def main() -> None:
    common.npm_main(__doc__, KIMI, SESSIONS, run_session, name="Kimi CLI",
                    start_mock=lambda log: common.Mock("mock_openai.py", log, slow=20, delay=20))


if __name__ == "__main__":
    main()
