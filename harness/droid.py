#!/usr/bin/env python3
"""Capture real Factory Droid fixtures against the mock OpenAI server.

    python harness/droid.py install                 # npm install the pinned droid
    python harness/droid.py capture [--only NAME]   # run the scenarios, write fixtures/droid/
    python harness/droid.py list                    # the sessions
    python harness/droid.py capture --version V     # another release: fixtures/droid/V/

Factory Droid (npm `droid`, whose postinstall fetches the native binary of its platform package)
runs with no Factory login in its air-gapped mode: FACTORY_AIRGAP_ENABLED=true,
FACTORY_DISABLE_KEYRING=1, a throwaway HOME and ~/.factory/settings.json naming one custom
OpenAI-compatible model (provider `generic-chat-completion-api`) whose baseUrl is
harness/mock_openai.py. It calls POST /v1/chat/completions (streamed); each turn first asks for a
session title with no tools (the mock answers it as a side call). Its tools Execute (a command
approval), Create (a file approval) and AskUser (a question form) are driven by the mock's
keyword scenarios. "Auto (Off)": every action asks.

The TUI draws on the main screen: under the transcript a mode row ('Auto (Off) · all actions
require approval … <model>'), the input box ('╭…╮ │ > … │ ╰…╯') and a footer ('? for help').
A turn shows '<spinner> Thinking...  (Press ESC to stop)' above the box and 'Enter to steer ·
Ctrl+Enter to queue' inside it. An approval replaces the box with a boxed choice list and the key
row '↑↓ navigate   Enter select   Esc cancel …'; a question shows its options and '↑/↓ Navigate •
Space/Enter/1–9 Select • ESC stop agent'. A new folder first asks 'Trust this folder?' ('Enter to
confirm · Esc to exit'). Keys typed before it finished loading are dropped, so every prompt waits
for the idle box first.

Processes: `…/node_modules/.bin/droid` is a symlink to the native ELF binary (comm `droid`, no
node). After each session the private tmux server is killed and then, by PID, every process
whose command line or environment names the session's unique HOME (never by process name).

Releases: the registry's `@factory/cli` 0.225.x installs but its platform package is not served,
so the pinned release is `droid` 0.215.0.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import Session  # noqa: E402

DROID = common.NpmRelease("droid", "droid", "droid", pinned="0.215.0")
TRUST = "Enter to confirm · Esc to exit"          # the folder-trust question's key row
APPROVAL = "Enter select   Esc cancel"            # a command / file approval's key row
QUESTION = "Space/Enter/1–9 Select"               # an AskUser form's key row
WORKING = ("Press ESC to stop", "Enter to steer")  # the spinner row / the box while a turn runs
FOOTER = "? for help"                             # the row under the idle input box


def is_idle(s: str) -> bool:
    return (FOOTER in s and "│ >" in s and not any(w in s for w in WORKING)
            and APPROVAL not in s and QUESTION not in s and TRUST not in s)


def is_working(s: str) -> bool:
    return any(w in s for w in WORKING)


class Ctx(common.Ctx):
    release = DROID
    columns = (42, 22, 8)

    def wait_idle(self, timeout: float = 90) -> str:
        scr = self.wait(is_idle, "idle input box", timeout)
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


def all_states(c: Ctx) -> None:
    """Every state this driver reaches, at the session's size."""
    c.wait_dialog(TRUST)
    c.shot("blocked-folder-trust", "blocked", "folder-trust",
           "first start in a new folder: 'Trust this folder?', '1. Trust this folder' / '2. Exit'")
    c.key("Enter")
    c.wait_idle()
    c.shot("idle-start", "idle", "start", "trusted the folder: logo, tips, empty input box")
    c.prompt("please run `sleep 8; ls -la` now")
    c.wait_dialog()
    c.shot("blocked-command", "blocked", "shell-permission",
           "Execute: 'Command to approve · medium risk', 'Yes, allow' … 'No, cancel'")
    c.key("Enter")
    c.wait_working()
    time.sleep(3)
    c.shot("working-tool-running", "working", "tool-running",
           "approved 'Yes, allow'; the 8 s command runs ('Executing...')", settle=None)
    c.wait_idle()
    c.shot("idle-after-approve", "idle", "after-approve", "the command finished; mock's final text")
    c.prompt("create src/cache_utils.py with a helper")
    c.wait_dialog()
    c.shot("blocked-edit", "blocked", "edit-permission", "Create: the new file's diff and the choices")
    c.key("Escape")
    c.wait_idle()
    c.shot("idle-after-reject-esc", "idle", "after-reject", "rejected the create with Esc ('Interrupted')")
    c.prompt("ask me which option to use")
    c.wait_dialog(QUESTION)
    c.shot("blocked-question", "blocked", "question", "AskUser: a question, numbered options, "
           "'Or type your own answer...'")
    c.key("1")
    c.wait_idle()
    c.shot("idle-after-answer", "idle", "after-answer", "picked '1. Minimal fix'; the mock replied")
    c.prompt("take your time and think about the cache layout")
    c.wait_working()
    time.sleep(4)
    c.shot("working-before-first-token", "working", "waiting-first-token",
           "mock holds the first token ('Thinking...')", settle=None)
    c.wait_idle()
    c.shot("idle-after-delayed-reply", "idle", "after-reply", "the delayed reply arrived")
    # 0.215.0 draws a streamed reply only once it is complete (the spinner row runs meanwhile), so
    # there is no "streaming" screen of its own: interrupt a held first token instead
    c.prompt("please ponder the retry policy")
    c.wait_working()
    time.sleep(3)
    c.key("Escape")
    c.wait_idle()
    c.shot("idle-after-interrupt", "idle", "after-interrupt", "Esc while waiting for the first token")


SESSIONS = [
    Session("first-80", 24, 80, project="webshop", run=all_states),
    Session("mid-120", 36, 120, project="ledger", run=all_states),
    Session("big-160", 48, 160, project="cache-service", run=all_states),
]


def settings(port: int) -> dict:
    return {"customModels": [{"model": "mock-model", "displayName": "Mock Model",
                              "baseUrl": f"http://127.0.0.1:{port}/v1", "apiKey": "dummy-key",
                              "provider": "generic-chat-completion-api", "maxOutputTokens": 4096}],
            "model": "custom:mock-model"}


def run_session(sess: Session, mock: common.Mock, only: str | None, index: dict) -> list[str]:
    base, home, proj = common.session_dirs("droid", sess)
    (home / ".factory").mkdir(parents=True)
    (home / ".factory" / "settings.json").write_text(json.dumps(settings(mock.port), indent=2))
    common.demo_project(proj)
    env = {"HOME": str(home), "FACTORY_AIRGAP_ENABLED": "true", "FACTORY_DISABLE_KEYRING": "1",
           **common.tmux_env()}
    return common.run_session(sess, lambda rec: Ctx(sess, rec, only, index), sess.run,
                              base=base, home=home, cmd=[str(DROID.bin)], env=env, cwd=proj)


def main() -> None:
    common.npm_main(__doc__, DROID, SESSIONS, run_session, name="Factory Droid",
                    start_mock=lambda log: common.Mock("mock_openai.py", log, slow=20, delay=20))


if __name__ == "__main__":
    main()
