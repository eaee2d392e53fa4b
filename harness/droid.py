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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import Busy, Dialog, Idle, Keys, Prompt, Session, Working, ask  # noqa: E402

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
    is_idle = staticmethod(is_idle)
    is_working = staticmethod(is_working)
    started = staticmethod(lambda s: not is_idle(s))
    dialog = APPROVAL
    take_mode = "matching"


ALL_STATES = [  # every state this driver reaches, at the session's size
    Dialog("blocked-folder-trust", "folder-trust",
           "first start in a new folder: 'Trust this folder?', '1. Trust this folder' / '2. Exit'",
           ("Enter",), needle=TRUST),
    Idle("idle-start", "start", "trusted the folder: logo, tips, empty input box"),
    ask("please run `sleep 8; ls -la` now", "blocked-command", "shell-permission",
        "Execute: 'Command to approve · medium risk', 'Yes, allow' … 'No, cancel'", ("Enter",)),
    Working("working-tool-running", "tool-running",
            "approved 'Yes, allow'; the 8 s command runs ('Executing...')"),
    Idle("idle-after-approve", "after-approve", "the command finished; mock's final text"),
    ask("create src/cache_utils.py with a helper", "blocked-edit", "edit-permission",
        "Create: the new file's diff and the choices", ("Escape",)),
    Idle("idle-after-reject-esc", "after-reject", "rejected the create with Esc ('Interrupted')"),
    ask("ask me which option to use", "blocked-question", "question",
        "AskUser: a question, numbered options, 'Or type your own answer...'", ("1",), needle=QUESTION),
    Idle("idle-after-answer", "after-answer", "picked '1. Minimal fix'; the mock replied"),
    Prompt("take your time and think about the cache layout"),
    Working("working-before-first-token", "waiting-first-token",
            "mock holds the first token ('Thinking...')", delay=4),
    Idle("idle-after-delayed-reply", "after-reply", "the delayed reply arrived"),
    # 0.215.0 draws a streamed reply only once it is complete (the spinner row runs meanwhile), so
    # there is no "streaming" screen of its own: interrupt a held first token instead
    Prompt("please ponder the retry policy"),
    Busy(3), Keys(("Escape",)),
    Idle("idle-after-interrupt", "after-interrupt", "Esc while waiting for the first token"),
]

SESSIONS = [
    Session("first-80", 24, 80, project="webshop", run=ALL_STATES),
    Session("mid-120", 36, 120, project="ledger", run=ALL_STATES),
    Session("big-160", 48, 160, project="cache-service", run=ALL_STATES),
]


def settings(port: int) -> dict:
    return {"customModels": [{"model": "mock-model", "displayName": "Mock Model",
                              "baseUrl": f"http://127.0.0.1:{port}/v1", "apiKey": "dummy-key",
                              "provider": "generic-chat-completion-api", "maxOutputTokens": 4096}],
            "model": "custom:mock-model"}


def setup(d: common.Driver, sess: Session, home: Path, proj: Path, mock: common.Mock) -> None:
    (home / ".factory").mkdir(parents=True)
    (home / ".factory" / "settings.json").write_text(json.dumps(settings(mock.port), indent=2))
    common.demo_project(proj)


DRIVER = common.Driver(
    DROID, "Factory Droid", __doc__, Ctx, SESSIONS, common.openai_mock(20, 20), setup=setup,
    env=lambda sess, home, proj, mock: {"HOME": str(home), "FACTORY_AIRGAP_ENABLED": "true",
                                        "FACTORY_DISABLE_KEYRING": "1"})

if __name__ == "__main__":
    DRIVER.main()
