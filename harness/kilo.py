#!/usr/bin/env python3
"""Capture real Kilo Code CLI fixtures against the mock OpenAI server.

    python harness/kilo.py install                 # npm install the pinned @kilocode/cli
    python harness/kilo.py capture [--only NAME]   # run the scenarios, write fixtures/kilo/
    python harness/kilo.py list                    # the sessions
    python harness/kilo.py capture --version V     # another release: fixtures/kilo/V/

Kilo Code's CLI is a fork of opencode: the same TUI (dialogs, footers, key hints) under its own
name, logo and title ("Kilo CLI"). It runs offline with the same provider config as opencode,
read from ~/.config/kilo/kilo.json: an `@ai-sdk/openai-compatible` provider pointing at
harness/mock_openai.py, `permission: {bash: ask, edit: ask}`. Its own "kilo" provider (Kilo's
gateway) fails to list models offline and is never used. So this driver runs opencode's session
scripts (harness/opencode.py, the pinned release's UI) with Kilo's binary, config path and
fixture folder.

Processes: `node …/node_modules/.bin/kilo` (the npm loader script) starts the native
`…/@kilocode/cli/bin/.kilo` in the same process group. After each session the private tmux
server is killed and then, by PID, every process whose command line or environment names the
session's unique HOME (never by process name).

Releases: the registry's @kilocode/cli 7.8.1 (newest on 2026-12-04) cannot be installed (its
@kilocode/cli-linux-x64@7.8.1 is not published); 7.7.7 is the newest that installs.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import opencode  # noqa: E402

KILO = common.NpmRelease("kilo", "@kilocode/cli", "kilo", pinned="7.7.7")
SESSIONS = opencode.SESSIONS
# Kilo's Reject opens a 'Reject permission / Tell Kilo what to do differently' box first
opencode.UI_EXTRA.update(reject_reason="Tell Kilo what to do differently")


class Ctx(opencode.Ctx):
    release = KILO


class Driver(opencode.Driver):
    config = ".config/kilo/kilo.json"


DRIVER = Driver(KILO, "Kilo Code CLI", __doc__, Ctx, SESSIONS, common.openai_mock(22, 25),
                setup=opencode.DRIVER.setup, describe=opencode.DRIVER.describe,
                plan=lambda ss: opencode.plan(ss, KILO))

if __name__ == "__main__":
    DRIVER.main()
