#!/usr/bin/env python3
"""Capture real Gemini CLI fixtures against the mock Gemini API server.

    python harness/gemini.py install                 # npm install the pinned @google/gemini-cli
    python harness/gemini.py capture [--only NAME]   # run the scenarios, write fixtures/gemini/
    python harness/gemini.py list                    # the sessions
    python harness/gemini.py capture --version V     # another release: fixtures/gemini/V/

Each session runs the real CLI in a private tmux server (harness/tmuxrec.py) with a throwaway
HOME and project folder under /work/agents, talking to harness/mock_gemini.py through
GOOGLE_GEMINI_BASE_URL. It drives the CLI with keys, waits on tmux's own screen and title for
the state, and snapshots the full byte prefix so far as fixtures/gemini/<name>.raw
(+ .screen.txt, tmux's `capture-pane -p`). `--only` takes a session name or a fixture name
(the whole session runs; only matching fixtures are rewritten). index.toml is merged.

Processes: `gemini` (node) re-execs itself as a child `node --max-old-space-size=… gemini`
that can outlive the pane. After each session every process whose command line or
environment names that session's unique HOME is killed by PID (never by name).
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import ByRelease, Idle, Prompt, Shot, Sleep, TypeChars, WaitText, Working, keys, send, turn  # noqa: E402

GEMINI = common.NpmRelease("gemini", "@google/gemini-cli", "gemini", pinned="0.61.0")
OSC_RE = re.compile(rb"\x1b\](\d+);(.*?)(?:\x07|\x1b\\)", re.S)
READY, WORKING, ACTION = "◇  Ready", "✦  Working", "✋  Action Required"
older_than = GEMINI.older_than


# -- what differs by release (each seen on real captures; NOTES-gemini.md has the details) --------
# A "since" release is the oldest release we captured that has the thing, not when it appeared.
# The three-state window title '◇  Ready' / '✦  Working…' / '✋  Action Required': 0.26.0 on
# (`ui.dynamicWindowTitle`, default on); 0.12.0 sets a fixed 'Gemini - <dir>' (its
# `ui.showStatusInTitle` is off by default), so the driver waits on the screen only there.
STATUS_TITLE_SINCE = "0.26.0"
# settings.json: 0.12.0 reads `general.disableAutoUpdate` / `disableUpdateNag` (0.26.0 and later
# migrate them to enableAutoUpdate / enableAutoUpdateNotification). Without them 0.12.0 updates
# itself at start (`npm install -g @google/gemini-cli@latest`: seen once, undone by hand).
NEW_UPDATE_KEYS_SINCE = "0.26.0"
# folder trust is off unless `security.folderTrust.enabled` in 0.12.0 and 0.26.0 (on by default
# in 0.42.0)
TRUST_DEFAULT_SINCE = "0.42.0"
# the trust dialog's question row
TRUST_NEEDLE = [("0.42.0", "Do you trust the files in this folder"),
                ("0.0.0", "Do you trust this folder?")]                      # 0.12.0, 0.26.0
# the API key entry box ('Enter Gemini API Key') when GEMINI_API_KEY is unset: 0.26.0 on. 0.12.0
# takes the key from GEMINI_API_KEY only: choosing 'Use Gemini API Key' then shows
# 'GEMINI_API_KEY not found' in the auth dialog.
API_KEY_BOX_SINCE = "0.26.0"
# with GEMINI_API_KEY set, the box is shown prefilled with it: 0.42.0 on; 0.26.0 and 0.12.0 go
# straight on to the composer.
API_KEY_PREFILLED_SINCE = "0.42.0"
# the ask_user tool ('Answer Questions' picker): 0.42.0 on (0.12.0 and 0.26.0 declare no such tool)
ASK_USER_SINCE = "0.42.0"
# 0.12.0 puts the prompt back into the composer after Esc (an interrupted or rejected turn);
# the next prompt would be typed after it, so it gets a Ctrl+U before each prompt (0.26.0 on
# leave the composer empty; the 0.26.0 sessions other than first-run-80 were captured with
# the Ctrl+U too, harmless on an empty composer).
CLEAR_COMPOSER_UNTIL = "0.26.0"




def last_title(raw: bytes) -> str | None:
    title = None
    for m in OSC_RE.finditer(raw):
        if m.group(1) in (b"0", b"2"):
            title = m.group(2).decode("utf-8", "replace").rstrip()
    return title


# ----------------------------------------------------------------------------------------------
@dataclass
class Session:
    name: str
    rows: int
    cols: int
    trusted: bool = True       # folder in ~/.gemini/trustedFolders.json
    auth: bool = True          # settings.json selects gemini-api-key (else the auth dialog)
    env_key: bool = True       # GEMINI_API_KEY in the environment
    truecolor: bool = False    # COLORTERM=truecolor (no "True color not detected" warning)
    project: str = "proj"
    run: Callable = None
    shots: list[str] = field(default_factory=list)


def is_idle(s: str, t: str) -> bool:
    """Composer up, title Ready, no 'esc to cancel' working row. Releases without the
    status title: the composer row ('> ' in its box, maybe with a restored prompt) and
    neither a working row nor 'Waiting for user confirmation'."""
    if older_than(STATUS_TITLE_SINCE):
        return (re.search(r"^[\s│]*> ", s, re.M) is not None
                and "esc to cancel" not in s and "Waiting for user confirmation" not in s)
    return t.startswith(READY) and "Type your message" in s and "esc to cancel" not in s


class Ctx(common.TitleCtx):
    release = GEMINI
    is_idle = staticmethod(is_idle)
    idle_what = "idle (composer; title Ready where there is one)"
    take_mode = "quiet"   # working screens never go quiet: tmux's screen for exactly the copied bytes

    def prompt(self, text: str) -> None:
        """Type a prompt; make sure it was submitted (the title left Ready; without the status
        title: a working row or a confirmation wait appeared)."""
        marks = (["esc to cancel".encode(), "Waiting for user confirmation".encode()]
                 if older_than(STATUS_TITLE_SINCE) else ["✦  Working".encode(), "✋  Action".encode()])
        if older_than(CLEAR_COMPOSER_UNTIL):
            self.rec.send("C-u")
            time.sleep(0.3)

        def started(mark: int) -> bool:
            raw = self.new_bytes(mark)
            return any(m in raw for m in marks)
        self.type_and_submit(text, started)

    def detail(self, facts: dict, dest: Path) -> str:
        return f" title={last_title(dest.read_bytes())!r}"


# ----------------------------------------------------------------------------------------------
# session scripts
TRUST = WaitText(lambda c: GEMINI.pick(TRUST_NEEDLE))
ALLOW, APPLY, PICKER = "Allow execution of", "Apply this change?", "Enter to select"   # dialogs' rows
NOTHING: list = []


def since(release: str, steps: list) -> ByRelease:
    """Steps only releases since `release` run."""
    return ByRelease({release: steps, "0.0.0": NOTHING})


FIRST_RUN_80 = [  # 80x24, nothing configured: trust, auth method, API key, then the basic states
    TRUST,
    Shot("blocked-trust-folder", "trust-folder",
         "first run, folder not in trustedFolders.json: trust dialog (title still 'Ready')"),
    send("Enter"),
    WaitText("How would you like to authenticate"),
    Shot("blocked-auth-method", "auth-method",
         "no auth type in settings.json: 'Get started' auth method choice (title still 'Ready')"),
    send("Enter"),
    ByRelease({
        API_KEY_PREFILLED_SINCE: [
            WaitText("Enter Gemini API Key"),
            Shot("blocked-api-key", "api-key",
                 "chose 'Use Gemini API Key'; the key entry box, prefilled from GEMINI_API_KEY"),
            send("Enter"),
            Idle("idle-start", "start", "submitted the key; empty composer")],
        "0.0.0": [   # the key comes from GEMINI_API_KEY, no entry box
            Idle("idle-start", "start", "chose 'Use Gemini API Key' (from GEMINI_API_KEY); empty composer")]}),
    Prompt("could you run `sleep 7; ls -la` for me", wait=ALLOW),
    Shot("blocked-shell", "shell-permission", "mock calls run_shell_command; 'Allow execution of [Shell]?' dialog"),
    send("Enter"),
    WaitText("esc to cancel"),
    Working("working-tool-running", "tool-running", "approved with Enter (Allow once); `sleep 7; ls -la` running",
            delay=2.5, wait=False),
    Idle("idle-after-approve", "after-approve", "the command ran; mock sent the final text"),
    turn("there is an off-by-one bug in main.py, can you fix it", "idle-reply-question", "reply-question",
         "ordinary reply ending with 'Would you like me to add a regression test?'", wait="regression test?"),
    Prompt("walk me through the startup code slowly", wait="careful walk-through"),
    Working("working-streaming", "streaming", "slow streamed reply (small chunks over ~26 s), 3 s in", wait=False),
    Sleep(3),
    send("Escape"),
    WaitText("Request cancelled"),
    Idle("idle-after-interrupt", "after-interrupt", "pressed Esc while the reply streamed: 'Request cancelled.'"),
]

BIG_160 = [  # 160x48, pre-trusted with auth: first token wait, reject an edit, answer ask_user
    Idle("idle-start", "start", "pre-trusted folder, auth in settings.json; fresh start"),
    Prompt("take your time and think about the cache invalidation design", wait="esc to cancel"),
    Working("working-before-first-token", "waiting-first-token",
            "mock holds the stream (headers sent, no chunk) before the first token", wait=False),
    Sleep(4),
    send("Escape"),
    Idle("idle-after-interrupt-waiting", "after-interrupt", "pressed Esc while waiting for the first token"),
    Prompt("please create docs/CHANGELOG.md with a release entry", wait=APPLY),
    Shot("blocked-edit", "edit-permission",
         "mock calls write_file for a new file: WriteFile diff + 'Apply this change?'"),
    send("Escape"),
    Idle("idle-after-reject-esc", "after-reject", "rejected the write with Esc: '→ Rejected', 'Request cancelled.'"),
    since(ASK_USER_SINCE, [
        Prompt("let me choose between two designs for the cache layer first", wait=PICKER),
        Shot("blocked-ask-user", "question", "mock calls the ask_user tool: 'Answer Questions' picker"),
        keys("Down"),
        send("Enter"),
        Idle("idle-after-answer", "after-reply", "picked option 2 in the ask_user picker; mock sent the final text")]),
]

TOOLS_160 = [  # 160x48 again (a separate session keeps each byte prefix short): long tool, slow stream
    Idle(),
    Prompt("please run `sleep 14 && echo integration suite finished` now", wait=ALLOW),
    Shot("blocked-shell", "shell-permission", "shell permission for a long command (160 columns)"),
    keys("Down"),
    send("Enter"),
    WaitText("esc to cancel"),
    Working("working-tool-running", "tool-running",
            "approved with 'Allow for this session'; the 14 s command runs", wait=False),
    Working("working-tool-running-late", "tool-running", "same command 8 s into its run", delay=5, wait=False),
    Idle("idle-after-approve", "after-approve", "the long command finished"),
    Prompt("explain in detail how the retry loop in main.py behaves", wait="careful walk-through"),
    Working("working-streaming", "streaming", "slow streamed reply, 8 s after the first chunk", delay=8, wait=False),
    Idle("idle-after-stream", "after-reply", "the slow reply finished streaming"),
]


def clear_draft(c: Ctx) -> None:
    for _ in range(60):
        c.rec.send("BSpace")
        time.sleep(0.01)


WAIT_80 = [  # 80x24 pre-trusted: a draft in the composer, first-token wait, the web_fetch dialog
    Idle(),
    TypeChars("refactor the parser into smaller functions"),
    Shot("idle-draft-input", "draft-input", "a prompt typed into the composer, not submitted"),
    clear_draft,
    WaitText("Type your message", 10),
    Prompt("please deliberate on whether the queue needs back-pressure", wait="esc to cancel"),
    Working("working-before-first-token", "waiting-first-token",
            "mock holds the stream before the first token (80 columns, 5 s in)", delay=5, wait=False),
    send("Escape"),
    Idle(),
    Prompt("fetch https://example.com/changelog and summarise it", wait="Do you want to proceed?"),
    Shot("blocked-fetch", "fetch-permission", "mock calls web_fetch: 'Do you want to proceed?' with the URL to fetch"),
    send("Enter"),
    Idle("idle-after-fetch", "after-approve",
         "allowed the fetch once; it failed offline and the mock sent the final text", timeout=120),
]

UNTRUSTED_90 = [  # 90x28, folder NOT trusted ('Don't trust'): dialogs lose their session-wide options
    TRUST,
    keys("Down", "Down"),
    send("Enter"),
    Idle("idle-start-untrusted", "start", "chose 'Don't trust' in the trust dialog"),
    Prompt("please run `sleep 6; date -u` and tell me", wait=ALLOW),
    Shot("blocked-shell-untrusted", "shell-permission",
         "untrusted folder: the Shell dialog has only 'Allow once' and 'No, suggest changes'"),
    send("Enter"),
    WaitText("esc to cancel"),
    Working("working-tool-running", "tool-running", "approved; `sleep 6` runs", delay=2, wait=False),
    Idle(),
    since(ASK_USER_SINCE, [
        Prompt("ask me which option to use for the database", wait=PICKER),
        keys("Down", "Down"),
        send("Enter"),
        WaitText("Enter to submit"),
        Shot("blocked-ask-user-custom", "question",
             "ask_user: chose 'Enter a custom value'; footer 'Enter to submit · Esc to cancel'"),
        send("Escape"),
        Idle("idle-after-ask-cancel", "after-reject", "cancelled the question with Esc")]),
]

MID_120 = [  # 120x36, untrusted but auth configured: trust parent, reject shell via 'No', approve edit
    TRUST,
    Shot("blocked-trust-folder", "trust-folder", "trust dialog (120 columns)"),
    keys("Down"),
    send("Enter"),
    Idle("idle-start-trusted-parent", "start", "chose 'Trust parent folder'; composer up"),
    Prompt("now run `git status --short > status.txt` and show me", wait=ALLOW),
    Shot("blocked-shell", "shell-permission", "shell permission dialog (120 columns)"),
    keys("Down", "Down"),
    send("Enter"),
    Idle("idle-after-reject-no", "after-reject", "rejected with option 3 'No, suggest changes' (arrows + Enter)"),
    Prompt("write a small test in tests/test_dates.py", wait=APPLY),
    Shot("blocked-edit", "edit-permission", "write_file permission (120 columns)"),
    send("Enter"),
    Idle("idle-after-approve-edit", "after-approve", "approved the write with Enter"),
    turn("the date parser has a leap year bug, please fix it", "idle-reply-question", "reply-question",
         "reply ending with 'Would you like me to add a regression test?' (120 columns)", wait="regression test?"),
    since(ASK_USER_SINCE, [
        Prompt("ask me which option to use for the log format", wait=PICKER),
        Shot("blocked-ask-user", "question", "ask_user picker (120 columns)"),
        send("Escape"),
        Idle("idle-after-ask-cancel", "after-reject", "cancelled the ask_user picker with Esc")]),
]


def choose_api_key(c: Ctx) -> None:
    """Down to '● N. Use Gemini API Key' (at most 4 times), then Enter."""
    for _ in range(4):
        if re.search(r"● \d\. Use Gemini API Key", c.rec.screen()):
            break
        c.key("Down")
    c.rec.send("Enter")


AUTH_100 = [  # 100x30, trusted folder but no auth and no GEMINI_API_KEY: auth choice + empty key box
    WaitText("How would you like to authenticate", settle=0.6),
    Shot("blocked-auth-method", "auth-method",
         "trusted folder, no auth in settings and no GEMINI_API_KEY: auth method choice"),
    choose_api_key,
    ByRelease({
        API_KEY_BOX_SINCE: [
            WaitText("Enter Gemini API Key", settle=0.6),
            Shot("blocked-api-key-empty", "api-key", "API key entry box, empty"),
            TypeChars("AIzaMockKeyForOfflineTests0123"),
            Shot("blocked-api-key-typed", "api-key", "API key typed into the box, not yet submitted"),
            send("Enter"),
            Idle("idle-start", "start", "key stored; composer up"),
            Prompt("please run `sleep 9 && du -sh .` in the project", wait=ALLOW),
            send("Enter"),
            WaitText("esc to cancel"),
            Sleep(2),
            send("Escape"),
            Idle("idle-after-interrupt-tool", "after-interrupt",
                 "approved a `sleep 9` command, then pressed Esc while it ran"),
            Prompt("hello, what can you do?"),
            Idle("idle-after-reply", "after-reply", "a short one-line reply")],
        "0.0.0": [   # no entry box: the dialog stays, with an error
            WaitText("GEMINI_API_KEY not found", settle=0.6),
            Shot("blocked-auth-method-no-key", "auth-method",
                 "chose 'Use Gemini API Key' with no GEMINI_API_KEY: the auth dialog stays, "
                 "'GEMINI_API_KEY not found' (this release has no key entry box)")]}),
]

SMALL_70 = [  # 70x20 pre-trusted, true colour: replace edit, wrapped shell dialog, stream at small size
    Idle("idle-start", "start", "70x20, COLORTERM=truecolor; fresh start"),
    Prompt("edit main.py: replace the print call please", wait=APPLY),
    Shot("blocked-edit-replace", "edit-permission",
         "mock calls replace on an existing file: Edit diff + 'Apply this change?' (small pane)"),
    keys("Down", "Down", "Down"),
    send("Enter"),
    Idle("idle-after-reject-no", "after-reject", "rejected the edit with option 4 'No'"),
    Prompt("execute `find . -name '*.py' -newer README.md -print > changed-files.txt` thanks", wait=ALLOW),
    Shot("blocked-shell-wrapped", "shell-permission", "shell dialog for a long command wrapped at 70 columns"),
    send("Escape"),
    Idle("idle-after-reject-esc", "after-reject", "rejected the command with Esc"),
    Prompt("could you explain in detail what changed-files.txt will contain", wait="careful walk-through"),
    Working("working-streaming-late", "streaming", "slow reply ~12 s in, text fills the small pane",
            delay=12, wait=False),
    Idle(),
]

SESSIONS = [
    Session("first-run-80", 24, 80, trusted=False, auth=False, project="webshop", run=FIRST_RUN_80),
    Session("big-160", 48, 160, truecolor=False, project="cache-service", run=BIG_160),
    Session("tools-160", 48, 160, project="build-tools", run=TOOLS_160),
    Session("wait-80", 24, 80, truecolor=True, project="queue_worker", run=WAIT_80),
    Session("mid-120", 36, 120, trusted=False, project="date_utils", run=MID_120),
    Session("untrusted-90", 28, 90, trusted=False, project="tokenizer", run=UNTRUSTED_90),
    Session("auth-100", 30, 100, auth=False, env_key=False, project="ledger", run=AUTH_100),
    Session("small-70", 20, 70, truecolor=True, project="scratchpad", run=SMALL_70),
]


def make_home(d: common.Driver, sess: Session, home: Path, proj: Path, mock: common.Mock) -> None:
    gdir = home / ".gemini"
    gdir.mkdir(parents=True)
    proj.mkdir(parents=True)
    (proj / "main.py").write_text("def main():\n    for i in range(10 - 1):\n        print(i)\n")
    (proj / "README.md").write_text("# demo\n")
    subprocess.run(["git", "init", "-q"], cwd=proj, check=True)
    general = ({"enableAutoUpdate": False, "enableAutoUpdateNotification": False}
               if not older_than(NEW_UPDATE_KEYS_SINCE) else {"disableAutoUpdate": True, "disableUpdateNag": True})
    settings: dict = {"general": general, "privacy": {"usageStatisticsEnabled": False}}
    if older_than(TRUST_DEFAULT_SINCE):
        settings["security"] = {"folderTrust": {"enabled": True}}
    if sess.auth:
        settings.setdefault("security", {})["auth"] = {"selectedType": "gemini-api-key"}
    (gdir / "settings.json").write_text(json.dumps(settings, indent=2))
    if sess.trusted:
        (gdir / "trustedFolders.json").write_text(json.dumps({str(proj): "TRUST_FOLDER"}))


def env(sess: Session, home: Path, proj: Path, mock: common.Mock) -> dict:
    e = {"HOME": str(home), "GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{mock.port}"}
    if sess.env_key:
        e["GEMINI_API_KEY"] = "mock-gemini-key-not-real"
    if sess.truecolor:
        e["COLORTERM"] = "truecolor"
    return e


DRIVER = common.Driver(
    GEMINI, "Gemini CLI", __doc__, Ctx, SESSIONS,
    lambda log: common.Mock("mock_gemini.py", log, slow=26, delay=35), setup=make_home, env=env,
    describe=lambda s: f"{s.name:14s} {s.cols}x{s.rows} trusted={s.trusted} auth={s.auth} "
                       f"env_key={s.env_key} project={s.project}")

if __name__ == "__main__":
    DRIVER.main()
