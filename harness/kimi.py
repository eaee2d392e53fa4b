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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import Idle, Prompt, Shot, Sleep, Working, ask, keys  # noqa: E402


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
    is_idle = staticmethod(is_idle)
    is_working = staticmethod(is_working)
    started = staticmethod(lambda s: not is_idle(s))
    idle_what = "idle input"
    dialog = APPROVAL
    take_mode = "matching"


def composing(prompt: str, how: str | None = None) -> list:
    """A slow streamed reply: Kimi draws a paragraph once it is complete, so the screen while it
    streams is the 'Composing… <n> tokens' spinner row; shot 4 s in (with a `how`)."""
    return [Prompt(prompt, wait="Composing"),
            Working("working-streaming", "streaming", how, delay=4, wait=False) if how else Sleep(4)]


# Every state this driver reaches, at the session's size (the interrupt last: Kimi sends an
# interrupted turn's prompt again, joined to the next one). A digit picks a choice at once.
ALL_STATES = [
    Idle(),
    Sleep(1.5),   # keys typed while it still loads are dropped
    Shot("idle-start", "start", "started: welcome box, empty input, mode and context rows"),
    ask("please run `sleep 8; ls -la` now", "blocked-command", "shell-permission",
        "Shell: 'Shell is requesting approval to run command', '→ [1] Approve once' … '[4] Reject, "
        "tell the model what to do instead'", ("1",)),
    Working("working-tool-running", "tool-running",
            "approved with '1'; the 8 s command runs ('Using Shell (…)')"),
    Idle("idle-after-approve", "after-approve", "the command finished; mock's final text"),
    ask("create src/cache_utils.py with a helper", "blocked-edit", "edit-permission",
        "WriteFile: 'requesting approval to edit file', the new file's lines and the choices", ("3",)),
    Idle("idle-after-reject", "after-reject", "rejected with '3' ('Rejected by user')"),
    ask("ask me which option to use", "blocked-question", "question",
        "AskUserQuestion: the question, '→ [1] Minimal fix', '[2] Refactor module', '[3] Other'",
        ("1",), needle=QUESTION),
    Idle("idle-after-answer", "after-answer", "picked '1'; the mock replied"),
    common.DELAYED_REPLY,
    composing("walk me through the scheduler slowly", "slow streamed reply, 4 s in ('Composing...')"),
    Idle("idle-after-reply", "after-reply", "the slow reply finished"),
    composing("explain the token refresh flow in detail"),
    keys("Escape"),
    Idle("idle-after-interrupt-stream", "after-interrupt",
         "Esc while the reply streamed ('Interrupted by user')"),
]

SESSIONS = common.sized(ALL_STATES)


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


DRIVER = common.Driver(KIMI, "Kimi CLI", __doc__, Ctx, SESSIONS, common.openai_mock(20, 20),
                       setup=common.home_config(".kimi/config.toml", config))

if __name__ == "__main__":
    DRIVER.main()
