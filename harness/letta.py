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
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

LETTA = common.NpmRelease("letta", "@letta-ai/letta-code", "letta", pinned="0.25.9")
FOOTER = "(shift+tab to cycle)"            # the mode row under the input
WORKING = "(esc to interrupt)"             # the status row while a turn runs
DIALOG = "Enter to select"                 # an approval's / a question's key row
QUESTION = "Arrow to navigate"             # only the question's key row
SIGN_IN = "Use ↑/↓ to navigate, Enter to select"


def is_idle(s: str) -> bool:
    return FOOTER in s and WORKING not in s and DIALOG not in s


def is_working(s: str) -> bool:
    return WORKING in s


class Ctx(common.Ctx):
    release = LETTA
    columns = (42, 22, 8)

    def wait_idle(self, timeout: float = 90) -> str:
        scr = self.wait(is_idle, "idle input", timeout)
        self.rec.settle(0.8, timeout=10)
        return scr

    def wait_dialog(self, needle: str = DIALOG, timeout: float = 60) -> str:
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


def sign_in(c: Ctx) -> None:
    c.wait_dialog(SIGN_IN)
    c.shot("blocked-sign-in", "blocked", "sign-in",
           "a new HOME without --backend local: 'Welcome to Letta Code!', 'Login to Letta Code' / 'Exit'")


def approve(c: Ctx) -> None:
    """Start, a command approved, the command running, its end."""
    c.wait_idle()
    c.shot("idle-start", "idle", "start", "logo, 'Starting new conversation', empty input")
    c.prompt("please run `sleep 6; ls -la` now")
    c.wait_dialog()
    c.shot("blocked-command", "blocked", "bash-permission",
           "Bash: 'Run this command?', '❯ 1. Yes' / '2. Yes, and don't ask again…' / '3. No, …'")
    c.key("Enter")
    c.wait_working()
    time.sleep(2.5)
    c.shot("working-tool-running", "working", "tool-running",
           "approved '1. Yes'; the 6 s command runs ('Running... (2s)')", settle=None)
    c.wait_idle()
    c.shot("idle-after-approve", "idle", "after-approve", "the command finished; mock's final text")


def edit_and_question(c: Ctx) -> None:
    """A file write rejected with Esc, then a question answered with its digit."""
    c.prompt("create src/cache_utils.py with a helper")
    c.wait_dialog()
    c.shot("blocked-edit", "blocked", "edit-permission", "Write: 'Write to <file>?', the new lines, the choices")
    c.key("Escape")
    c.wait_idle()
    c.shot("idle-after-reject-esc", "idle", "after-reject", "rejected the write with Esc ('Approval cancelled')")
    c.prompt("ask me which option to use")
    c.wait_dialog(QUESTION)
    c.shot("blocked-question", "blocked", "question",
           "AskUserQuestion: header, question, '❯ 1. Minimal fix' … '3. Type something.'")
    c.key("1")
    c.wait_idle()
    c.shot("idle-after-answer", "idle", "after-answer", "picked '1. Minimal fix'; the mock replied")


def replies(c: Ctx) -> None:
    """A held first token, then a streamed reply interrupted with Esc."""
    common.delayed_reply(c)
    common.interrupted_stream(c, "Escape")


@dataclass
class LettaSession(common.Session):
    local: bool = True   # --backend local (after `letta connect`); False: a new HOME's sign-in


# one short recording per script (a fresh Letta each): the fixtures replay from the recording's
# start, and the spinner row redraws several KB a second, so long sessions would be megabytes
SIZES = [(24, 80, "webshop"), (36, 120, "ledger"), (48, 160, "cache-service")]
SCRIPTS = [("setup", sign_in, False), ("approve", approve, True), ("edit", edit_and_question, True),
           ("replies", replies, True)]
SESSIONS = [LettaSession(f"{name}-{cols}", rows, cols, project=proj, run=run, local=local)
            for name, run, local in SCRIPTS for rows, cols, proj in SIZES]


def run_session(sess: LettaSession, mock: common.Mock, only: str | None, index: dict) -> list[str]:
    base, home, proj = common.session_dirs("letta", sess)
    home.mkdir(parents=True)
    common.demo_project(proj)
    env = {"HOME": str(home), **common.tmux_env()}
    cmd = [str(LETTA.bin), "--permission-mode", "standard"]
    if sess.local:
        (home / ".letta").mkdir()
        (home / ".letta" / "settings.json").write_text(json.dumps({"tokenStreaming": True}, indent=2))
        done = subprocess.run([str(LETTA.bin), "connect", "lmstudio", "--base-url",
                               f"http://127.0.0.1:{mock.port}/v1", "--backend", "local"],
                              env=env, cwd=proj, capture_output=True, text=True, timeout=60)
        if done.returncode != 0:   # e.g. 0.25.3: "Unknown option '--base-url'"
            common.reap(home)
            raise SystemExit(f"letta {LETTA.version}: `letta connect lmstudio` failed: "
                             f"{(done.stderr or done.stdout).strip().splitlines()[0]}")
        cmd[1:1] = ["--backend", "local"]
    return common.run_session(sess, lambda rec: Ctx(sess, rec, only, index), sess.run,
                              base=base, home=home, cmd=cmd, env=env, cwd=proj)


def main() -> None:
    common.npm_main(__doc__, LETTA, SESSIONS, run_session, name="Letta Code",
                    start_mock=lambda log: common.Mock("mock_openai.py", log, slow=20, delay=10))


if __name__ == "__main__":
    main()
