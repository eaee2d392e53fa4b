#!/usr/bin/env python3
"""Capture real Letta Code fixtures against the mock OpenAI server.

    python harness/letta.py install                 # npm install the pinned letta
    python harness/letta.py capture [--only NAME]   # run the scenarios, write fixtures/letta/
    python harness/letta.py list                    # the sessions
    python harness/letta.py capture --version V     # another release: fixtures/letta/V/

Letta Code (npm `@letta-ai/letta-code`, a node script `letta`) runs with no Letta account on its
local backend: `letta connect lmstudio --base-url http://127.0.0.1:PORT/v1 --backend local`
(run once per throwaway HOME, it writes ~/.letta/lc-local-backend/providers/auth.json) and then
`letta --backend local --permission-mode standard` (every tool call asks). It calls POST
/v1/chat/completions (streamed) with its tools Bash, Write, Edit, AskUserQuestion, memory, …;
the mock's `letta_tool_call` answers them. `~/.letta/settings.json` sets `tokenStreaming: true`
(the default draws a reply only once it is complete), so a streamed reply has a screen of its own.

Without `--backend local` a new HOME starts on a sign-in screen ('Welcome to Letta Code!',
'Login to Letta Code' / 'Exit'): the `setup-*` sessions shoot only that. The other scripts
(approve, edit, replies) each get a fresh HOME and Letta at each size.

The TUI draws on the main screen: under the transcript a rule, the prompt row '›', a rule and
the mode footer '▶ standard (request approval) mode (shift+tab to cycle) … Letta Code [model]'.
A turn shows '<glyph> Letta Code is <verb>… (esc to interrupt)' above the input. An approval
('Run this command?', 'Write to <file>?') replaces the input with numbered choices ('❯ 1. Yes')
and 'Enter to select · Esc to cancel'; AskUserQuestion adds '· Arrow to navigate'.

Processes: `…/node_modules/.bin/letta` is a symlink to `@letta-ai/letta-code/letta.js` (a node
script): the pane's process is `node …/.bin/letta …`. After each session the private tmux
server is killed and then, by PID, every process naming the session's unique HOME.

Releases: 0.30.28 and newer do not install from the registry here (0.30.28 needs
`@letta-ai/trajectory@0.2.0`, 0.31.12+ `@janhapke/sharp-electron@0.35.3-electron.1`, neither
published), so the pinned release is 0.25.9, the newest that installs.
"""
from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import Dialog, Idle, Working, ask  # noqa: E402

LETTA = common.NpmRelease("letta", "@letta-ai/letta-code", "letta", pinned="0.25.9")
FOOTER = "(shift+tab to cycle)"            # the mode row under the input
WORKING = "(esc to interrupt)"             # the status row while a turn runs
DIALOG = "Enter to select"                 # an approval's / a question's key row
QUESTION = "Arrow to navigate"             # only the question's key row
SIGN_IN = "Use ↑/↓ to navigate, Enter to select"


def is_idle(s: str) -> bool:
    return FOOTER in s and WORKING not in s and DIALOG not in s


class Ctx(common.Ctx):
    release = LETTA
    columns = (42, 22, 8)
    is_idle = staticmethod(is_idle)
    is_working = staticmethod(lambda s: WORKING in s)
    started = staticmethod(lambda s: not is_idle(s))
    idle_what = "idle input"
    dialog = DIALOG
    take_mode = "matching"


SIGN_IN_SCREEN = [Dialog("blocked-sign-in", "sign-in",
                         "a new HOME without --backend local: 'Welcome to Letta Code!', 'Login to Letta Code' / "
                         "'Exit'", needle=SIGN_IN)]

APPROVE = [  # start, a command approved, the command running, its end
    Idle("idle-start", "start", "logo, 'Starting new conversation', empty input"),
    ask("please run `sleep 6; ls -la` now", "blocked-command", "bash-permission",
        "Bash: 'Run this command?', '❯ 1. Yes' / '2. Yes, and don't ask again…' / '3. No, …'", ("Enter",)),
    Working("working-tool-running", "tool-running",
            "approved '1. Yes'; the 6 s command runs ('Running... (2s)')", delay=2.5),
    Idle("idle-after-approve", "after-approve", "the command finished; mock's final text"),
]

EDIT_AND_QUESTION = [  # a file write rejected with Esc, then a question answered with its digit
    ask("create src/cache_utils.py with a helper", "blocked-edit", "edit-permission",
        "Write: 'Write to <file>?', the new lines, the choices", ("Escape",)),
    Idle("idle-after-reject-esc", "after-reject", "rejected the write with Esc ('Approval cancelled')"),
    ask("ask me which option to use", "blocked-question", "question",
        "AskUserQuestion: header, question, '❯ 1. Minimal fix' … '3. Type something.'", ("1",), needle=QUESTION),
    Idle("idle-after-answer", "after-answer", "picked '1. Minimal fix'; the mock replied"),
]

REPLIES = [common.DELAYED_REPLY, common.interrupted_stream_steps("Escape")]  # a held first token, an interrupted stream


@dataclass
class LettaSession(common.Session):
    local: bool = True   # --backend local (after `letta connect`); False: a new HOME's sign-in


# one short recording per script (a fresh Letta each): the fixtures replay from the recording's
# start, and the spinner row redraws several KB a second, so long sessions would be megabytes
SESSIONS = [*common.sized(SIGN_IN_SCREEN, "setup", LettaSession, local=False),
            *common.sized(APPROVE, "approve", LettaSession),
            *common.sized(EDIT_AND_QUESTION, "edit", LettaSession),
            *common.sized(REPLIES, "replies", LettaSession)]


def setup(d: common.Driver, sess: LettaSession, home: Path, proj: Path, mock: common.Mock) -> None:
    """HOME and the project; for a local session, ~/.letta/settings.json and `letta connect`."""
    home.mkdir(parents=True)
    common.demo_project(proj)
    if not sess.local:
        return
    (home / ".letta").mkdir()
    (home / ".letta" / "settings.json").write_text(json.dumps({"tokenStreaming": True}, indent=2))
    done = subprocess.run([str(LETTA.bin), "connect", "lmstudio", "--base-url",
                           f"http://127.0.0.1:{mock.port}/v1", "--backend", "local"],
                          env={"HOME": str(home), **common.tmux_env()}, cwd=proj,
                          capture_output=True, text=True, timeout=60)
    if done.returncode != 0:   # e.g. 0.25.3: "Unknown option '--base-url'"
        common.reap(home)
        raise SystemExit(f"letta {LETTA.version}: `letta connect lmstudio` failed: "
                         f"{(done.stderr or done.stdout).strip().splitlines()[0]}")


DRIVER = common.Driver(
    LETTA, "Letta Code", __doc__, Ctx, SESSIONS, common.openai_mock(20, 10), setup=setup,
    cmd=lambda sess, proj: [str(LETTA.bin), *(["--backend", "local"] if sess.local else []),
                            "--permission-mode", "standard"])

if __name__ == "__main__":
    DRIVER.main()
