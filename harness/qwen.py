#!/usr/bin/env python3
"""Capture real Qwen Code fixtures against the mock OpenAI server.

    python harness/qwen.py install                 # npm install the pinned @qwen-code/qwen-code
    python harness/qwen.py capture [--only NAME]   # run the scenarios, write fixtures/qwen/
    python harness/qwen.py list                    # the sessions
    python harness/qwen.py capture --version V     # another release: fixtures/qwen/V/

Each session runs the real CLI (`qwen --approval-mode default`) in a private tmux server
(harness/tmuxrec.py) with a throwaway HOME and a git project folder under /work/agents,
talking to harness/mock_openai.py (chat completions SSE with tool calls) through
OPENAI_BASE_URL / OPENAI_API_KEY / OPENAI_MODEL. ~/.qwen/settings.json turns off auto-update,
usage statistics, follow-up suggestions and the background memory / skill extraction
(side calls the mock would answer by keyword) and ripgrep (the bundled
`rg` is not executable after an npm install that skips scripts). The driver waits on tmux's
screen and title, and snapshots the full byte prefix so far as fixtures/qwen/<name>.raw
(+ .screen.txt, tmux's `capture-pane -p`). `--only` takes a session name or a fixture name (the
whole session runs; only matching fixtures are rewritten). index.toml is merged, not replaced.

Processes: `qwen` is a node script (`node …/node_modules/.bin/qwen`, process name `node`).
After each session the private tmux server is killed and then, by PID, every process whose
command line or environment names the session's unique HOME (never by process name).
"""
from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import ByRelease, Idle, Prompt, Shot, Sleep, WaitText, Working, ask, keys, turn  # noqa: E402

QWEN = common.NpmRelease("qwen", "@qwen-code/qwen-code", "qwen", pinned="0.24.4")
WORKING, BLOCKED = "◐︎ Qwen", "✳︎ Qwen"


# -- what differs by release (seen on real captures; NOTES-qwen.md has the details) -------------
# 0.1.4 is the Gemini-CLI-era UI: the title is a fixed 'Qwen - <dir>' (no working / blocked
# glyph), the loading row reads '(esc to cancel, 3s)', the composer sits in a rounded box with no
# approval-mode hint under it, dialogs are boxes with '● N.' radio rows, and there is no
# ask_user_question tool. The next release in the registry after 0.1.4 is 0.5.0 (not captured):
# "before 0.5.0" means "like 0.1.4".
MODERN = "0.5.0"   # ByRelease key of the pinned release's UI; "0.0.0": the 0.1.x UI


def legacy() -> bool:
    """The 0.1.x UI (seen on 0.1.4)."""
    return QWEN.older_than(MODERN)


# the package asks for node >=22 (npm warns EBADENGINE); it runs on node 20


@dataclass
class Session(common.Session):
    provider: bool = True      # OPENAI_* env set (else the provider screen)
    legacy_only: bool = False  # a session only the 0.1.x driver runs (its first-run dialogs)
    trust: bool = False        # security.folderTrust.enabled (0.1.4: the trust dialog at start)


def is_idle(s: str, t: str) -> bool:
    """Title 'Qwen - dir' (no state glyph), composer footer up, no 'esc to cancel' row.
    (After Esc on a turn the prompt goes back into the composer, so no placeholder then.)
    0.1.4: the title never changes and there is no footer hint: the boxed composer row
    '│ > …' is up, with no loading row and no pending confirmation."""
    if legacy():
        return (any(r.lstrip().startswith("│ > ") for r in s.splitlines())
                and "esc to cancel" not in s and "Waiting for user confirmation" not in s)
    return t.strip().startswith("Qwen - ") and "shift + tab to cycle" in s and "esc to cancel" not in s


def is_working(s: str, t: str) -> bool:
    """The working title; 0.1.4 (no title states): the '(esc to cancel, 3s)' loading row."""
    return "esc to cancel" in s if legacy() else t.strip().startswith(WORKING)


class Ctx(common.TitleCtx):
    release = QWEN
    columns = (42, 22, 8)
    is_idle = staticmethod(is_idle)
    is_working = staticmethod(is_working)
    idle_what, working_what = "idle", "working (title or loading row)"
    take_mode = "quiet"   # working screens never go quiet: tmux's screen for exactly the copied bytes

    def has_started(self, mark: int) -> bool:
        """The prompt was submitted: the title left idle (0.1.4, no title states: the loading
        row or a confirmation), in the bytes since the Enter."""
        raw = self.new_bytes(mark)
        if legacy():
            return b"esc to cancel" in raw or b"Waiting for user confirmation" in raw
        return WORKING.encode() in raw or BLOCKED.encode() in raw

    def detail(self, facts: dict, dest: Path) -> str:
        return f" title={facts['title'].strip()!r}"


SLEEP = "python3 -c 'import time; time.sleep({n})'"   # Qwen refuses `sleep N; cmd` chains
ALLOW, APPLY, PICKER = "Allow execution of", "Apply this change?", "Esc: Cancel"   # dialogs' rows
REGRESSION = "regression test?"   # the end of the mock's reply-with-a-question


# ----------------------------------------------------------------------------------------------
# session scripts

FIRST_80 = [
    Idle("idle-start", "start", "fresh start: logo, tips, empty composer, title 'Qwen - dir'"),
    ask(f"please run `{SLEEP.format(n=8)}` now", "blocked-command", "shell-permission",
        "run_shell_command under --approval-mode default: 'Allow execution of: …?' (title ✳︎)", ("Enter",),
        needle=ALLOW),
    Working("working-tool-running", "tool-running",
            "approved 'Yes, allow once' with Enter; the 8 s command runs (title ◐︎)", delay=2.5),
    Idle("idle-after-approve", "after-approve", "the command finished; mock's final text"),
    turn("the date parser has a bug with leap years, please fix it", "idle-reply-question", "reply-question",
         "reply ending 'Would you like me to add a regression test?'", wait=REGRESSION),
    ask(lambda c: f"create {c.proj}/src/cache_utils.py with a helper", "blocked-edit", "edit-permission",
        "write_file call: 'WriteFile Writing to …' diff + 'Apply this change?'", ("Escape",), needle=APPLY),
    Idle("idle-after-reject-esc", "after-reject", "rejected the write with Esc"),
    Prompt("take your time and think about the cache layout"),
    Working("working-before-first-token", "waiting-first-token",
            "mock holds the first token; witty loading row '(3s · esc to cancel)'"),
    keys("Escape"),
    Idle("idle-after-interrupt", "after-interrupt",
         "Esc while waiting for the first token (the prompt goes back into the composer)"),
]

BIG_160 = [
    Idle("idle-start", "start", "fresh start at 160 columns"),
    Prompt("walk me through the scheduler slowly", wait="careful walk-through"),
    Working("working-streaming", "streaming", "slow streamed reply, 3 s in", wait=False),
    Working("working-streaming-late", "streaming", "same reply 8 s in", delay=5, wait=False),
    Idle("idle-after-reply", "after-reply", "the slow reply finished", timeout=60),
    ask(lambda c: f"write {c.proj}/docs/NOTES.md with the release notes", "blocked-edit", "edit-permission",
        "write_file confirmation (160 columns)", ("Enter",), needle=APPLY),
    Idle("idle-after-approve-edit", "after-approve", "allowed the write once; file created"),
    # read-only commands run unasked
    ask("execute `mkdir -p build && date > build/stamp.txt` for me", "blocked-command", "shell-permission",
        "shell confirmation (160 columns)", needle=ALLOW),
    ByRelease({
        MODERN: [keys("Down", "Down", "Down", settle=0.4),
                 Shot("blocked-command-no-selected", "shell-permission",
                      "same dialog with '4. No, suggest changes (esc)' selected")],
        "0.0.0": [keys("Down", "Down", settle=0.4),   # 0.1.4: three options
                  Shot("blocked-command-no-selected", "shell-permission",
                       "same dialog with '3. No, suggest changes (esc)' selected")]}),
    keys("Enter"),
    Idle("idle-after-reject", "after-reject", "picked 'No, suggest changes' with Enter"),
    turn("there's an off-by-one in the pager, can you fix it", "idle-reply-question", "reply-question",
         "reply ending with a question (160 columns)", wait=REGRESSION),
]

MID_120 = [
    Idle(),
    ask(f"run `{SLEEP.format(n=10)}` to warm the cache", "blocked-command", "shell-permission",
        "shell confirmation (120 columns)", ("Down", "Enter"), needle=ALLOW),
    Working("working-tool-running", "tool-running",
            "approved 'Always allow … in this project'; the 10 s command runs"),
    Idle("idle-after-approve", "after-approve", "the command finished", timeout=60),
    common.DELAYED_REPLY,
    Prompt("explain the token refresh flow in detail", wait="careful walk-through"),
    Sleep(3),
    keys("Escape"),
    Idle("idle-after-interrupt-stream", "after-interrupt", "Esc while the reply streamed"),
]

ASK_PART = [  # the ask_user_question pickers (0.24.4; 0.1.4 has no question tool)
    ask("let me choose between two designs for the cache layer first", "blocked-question", "question",
        "ask_user_question call: 'AskUserQuestion' picker, '↑/↓: Navigate | Enter: Select | Esc: Cancel'",
        ("Down", "Enter"), needle=PICKER),
    Idle("idle-after-answer", "after-reply", "picked option 2 with Down, Enter; mock answered"),
    ask("before touching the logger, ask me which option you should use", "blocked-question-2", "question",
        "a second ask_user_question picker", ("Escape",), needle=PICKER),
    Idle("idle-after-dismiss", "after-reject", "dismissed the question with Esc"),
]

ASK_100 = [
    Idle("idle-start", "start", "fresh start at 100 columns"),
    ByRelease({MODERN: ASK_PART, "0.0.0": []}),
    ask(lambda c: f"add {c.proj}/tests/test_parse.py with a smoke test", "blocked-edit", "edit-permission",
        "write_file confirmation (100 columns)", ("Down", "Enter"), needle=APPLY),
    Idle("idle-after-approve-always", "after-approve", "picked '2. Yes, allow always'"),
    turn("fix the regression in the tokenizer please", "idle-reply-question", "reply-question",
         "reply ending with a question (100 columns)", wait=REGRESSION),
]

NOPROV_100 = [  # no OPENAI_* env and no auth in settings: what Qwen shows then
    ByRelease({
        MODERN: [Sleep(8, settle=1.0),
                 Shot("blocked-provider", "provider-setup",
                      "no provider env / settings: the provider-connection screen")],
        "0.0.0": [WaitText("How would you like to authenticate", settle=1.0),
                  Shot("blocked-provider", "provider-setup",
                       "no provider env / auth in settings: 'Get started' auth dialog, '● 1. Qwen OAuth'"),
                  keys("Down", settle=0.5),
                  Shot("blocked-provider-openai", "provider-setup",
                       "the same auth dialog with '● 2. OpenAI' selected (Down)"),
                  keys("Enter"),
                  WaitText("OpenAI Configuration Required", settle=1.0),
                  Shot("blocked-openai-config", "provider-setup",
                       "Enter on OpenAI: 'OpenAI Configuration Required' key / base URL / model form")]}),
]

TRUST = [  # 0.1.4 with security.folderTrust.enabled: the folder trust dialog first
    WaitText("Do you trust this folder?", settle=1.0),
    Shot("blocked-trust", "trust",
         "folderTrust enabled, first start in the folder: 'Do you trust this folder?' dialog"),
    keys("Enter"),
    Idle("idle-after-trust", "after-approve", "trusted the folder with Enter: logo, empty composer"),
]

SESSIONS = [
    Session("first-80", 24, 80, project="webshop", run=FIRST_80),
    Session("big-160", 48, 160, project="cache-service", run=BIG_160),
    Session("mid-120", 36, 120, project="ledger", run=MID_120),
    Session("ask-100", 30, 100, project="tokenizer", run=ASK_100),
    Session("noprov-100", 30, 100, project="scratchpad", provider=False, run=NOPROV_100),
    Session("trust-80", 24, 80, project="inventory", trust=True, legacy_only=True, run=TRUST),
    Session("trust-120", 36, 120, project="billing", trust=True, legacy_only=True, run=TRUST),
]


# ----------------------------------------------------------------------------------------------
# 0.1.4's settings schema (Gemini CLI era): no enableAutoUpdate / follow-up suggestions / managed
# memory; the update check still runs, disableUpdateNag keeps its box off the screen. With
# OPENAI_* env but no selectedType it still opens the auth dialog.
SETTINGS = {
    MODERN: {"general": {"enableAutoUpdate": False},
             "ui": {"enableFollowupSuggestions": False},
             "privacy": {"usageStatisticsEnabled": False},
             "memory": {"enableManagedAutoMemory": False, "enableManagedAutoDream": False,
                        "enableAutoSkill": False},
             "tools": {"useRipgrep": False}},
    "0.0.0": {"general": {"disableAutoUpdate": True, "disableUpdateNag": True},
              "privacy": {"usageStatisticsEnabled": False},
              "tools": {"useRipgrep": False}},
}


def setup(d: common.Driver, sess: Session, home: Path, proj: Path, mock: common.Mock) -> None:
    qdir = home / ".qwen"
    qdir.mkdir(parents=True)
    proj.mkdir(parents=True)
    (proj / "main.py").write_text("def main():\n    for i in range(10 - 1):\n        print(i)\n")
    (proj / "README.md").write_text("# demo\n")
    subprocess.run(["git", "init", "-q"], cwd=proj, check=True)
    settings = json.loads(json.dumps(QWEN.pick(SETTINGS)))
    if legacy():
        if sess.provider:
            settings["security"] = {"auth": {"selectedType": "openai"}}
        if sess.trust:
            settings.setdefault("security", {})["folderTrust"] = {"enabled": True}
    (qdir / "settings.json").write_text(json.dumps(settings, indent=2))


def env(sess: Session, home: Path, proj: Path, mock: common.Mock) -> dict:
    e = {"HOME": str(home)}
    if legacy():
        # 0.1.4 asks the npm registry for a newer release at every start (update-notifier, not
        # switched off by any setting): point it at a closed local port so it stays on the machine
        e["npm_config_registry"] = "http://127.0.0.1:9/"
    if sess.provider:
        e.update({"OPENAI_BASE_URL": f"http://127.0.0.1:{mock.port}/v1",
                  "OPENAI_API_KEY": "sk-mock-not-a-real-key", "OPENAI_MODEL": "mock-model"})
    return e


DRIVER = common.Driver(
    QWEN, "Qwen Code", __doc__, Ctx, SESSIONS, common.openai_mock(20, 20), setup=setup, env=env,
    cmd=lambda sess, proj: [str(QWEN.bin), "--approval-mode", "default"],
    describe=lambda s: f"{s.name:12s} {s.cols}x{s.rows} provider={s.provider}",
    plan=lambda ss: [s for s in ss if legacy() or not s.legacy_only])

if __name__ == "__main__":
    DRIVER.main()
