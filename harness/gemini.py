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
from common import AGENTS, REPO  # noqa: E402

PINNED = "0.61.0"           # the release the rules were derived from (fixtures/gemini/)
VERSION = PINNED
PREFIX = AGENTS / f"gemini-{VERSION}"
GEMINI_BIN = PREFIX / "node_modules" / ".bin" / "gemini"
OUT = REPO / "fixtures" / "gemini"
OSC_RE = re.compile(rb"\x1b\](\d+);(.*?)(?:\x07|\x1b\\)", re.S)
READY, WORKING, ACTION = "◇  Ready", "✦  Working", "✋  Action Required"


def older_than(v: str) -> bool:
    """True when the release being driven (VERSION) is older than `v`."""
    return common.vtuple(VERSION) < common.vtuple(v)


def configure(version: str | None, out: Path | None) -> None:
    """`--version V` / `--out DIR` (common.main): point the install prefix, the binary and the
    fixture folder at another release; the pinned release keeps fixtures/gemini/."""
    global VERSION, PREFIX, GEMINI_BIN, OUT
    if version:
        VERSION = version
        PREFIX = AGENTS / f"gemini-{VERSION}"
        GEMINI_BIN = PREFIX / "node_modules" / ".bin" / "gemini"
    OUT = out.resolve() if out else (REPO / "fixtures" / "gemini" if VERSION == PINNED
                                     else common.release_out("gemini", VERSION))
    Ctx.version, Ctx.out = VERSION, OUT  # bound at class definition


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


def by_release(table: list[tuple[str, object]]):
    """The value for VERSION in a newest-first [(release, value), ...] table: that of the newest
    release listed that is not newer than VERSION (the last entry for anything older)."""
    for since, value in table:
        if not older_than(since):
            return value
    return table[-1][1]


def install() -> None:
    common.npm_install(PREFIX, GEMINI_BIN, "@google/gemini-cli", VERSION)


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


class Ctx(common.TitleCtx):
    agent, version, out = "gemini", VERSION, OUT

    def wait_title(self, prefix: str, timeout: float = 60) -> str:
        return self.wait(lambda s, t: t.startswith(prefix), f"title {prefix!r}", timeout)

    def wait_idle(self, timeout: float = 90) -> str:
        """Composer up, title Ready, no 'esc to cancel' working row. Releases without the
        status title: the composer row ('> ' in its box, maybe with a restored prompt) and
        neither a working row nor 'Waiting for user confirmation'."""
        if older_than(STATUS_TITLE_SINCE):
            scr = self.wait(lambda s, t: re.search(r"^[\s│]*> ", s, re.M) is not None
                            and "esc to cancel" not in s and "Waiting for user confirmation" not in s,
                            "idle composer", timeout)
        else:
            scr = self.wait(lambda s, t: t.startswith(READY) and "Type your message" in s
                            and "esc to cancel" not in s, "idle", timeout)
        self.rec.settle(0.8, timeout=10)
        return scr

    def wait_trust(self) -> str:
        return self.wait_text(by_release(TRUST_NEEDLE))

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

    def take(self, dest: Path, settle: float | None) -> dict:
        # working screens never go quiet: keep tmux's screen for exactly the copied bytes
        return self.rec.snapshot_quiet(dest, settle=settle)

    def detail(self, facts: dict, dest: Path) -> str:
        return f" title={last_title(dest.read_bytes())!r}"


# ----------------------------------------------------------------------------------------------
# session scripts

def s_first_run_80(c: Ctx) -> None:
    """80x24, nothing configured: trust, auth method, API key, then the basic states."""
    c.wait_trust()
    c.shot("blocked-trust-folder", "blocked", "trust-folder",
           "first run, folder not in trustedFolders.json: trust dialog (title still 'Ready')")
    c.rec.send("Enter")
    c.wait_text("How would you like to authenticate")
    c.shot("blocked-auth-method", "blocked", "auth-method",
           "no auth type in settings.json: 'Get started' auth method choice (title still 'Ready')")
    c.rec.send("Enter")
    if older_than(API_KEY_PREFILLED_SINCE):   # the key comes from GEMINI_API_KEY, no entry box
        c.wait_idle()
        c.shot("idle-start", "idle", "start", "chose 'Use Gemini API Key' (from GEMINI_API_KEY); empty composer")
    else:
        c.wait_text("Enter Gemini API Key")
        c.shot("blocked-api-key", "blocked", "api-key",
               "chose 'Use Gemini API Key'; the key entry box, prefilled from GEMINI_API_KEY")
        c.rec.send("Enter")
        c.wait_idle()
        c.shot("idle-start", "idle", "start", "submitted the key; empty composer")
    c.prompt("could you run `sleep 7; ls -la` for me")
    c.wait_text("Allow execution of")
    c.shot("blocked-shell", "blocked", "shell-permission",
           "mock calls run_shell_command; 'Allow execution of [Shell]?' dialog")
    c.rec.send("Enter")
    c.wait_text("esc to cancel")
    time.sleep(2.5)
    c.shot("working-tool-running", "working", "tool-running",
           "approved with Enter (Allow once); `sleep 7; ls -la` running", settle=None)
    c.wait_idle()
    c.shot("idle-after-approve", "idle", "after-approve", "the command ran; mock sent the final text")
    c.prompt("there is an off-by-one bug in main.py, can you fix it")
    c.wait_text("regression test?")
    c.wait_idle()
    c.shot("idle-reply-question", "idle", "reply-question",
           "ordinary reply ending with 'Would you like me to add a regression test?'")
    c.prompt("walk me through the startup code slowly")
    c.wait_text("careful walk-through")
    time.sleep(3)
    c.shot("working-streaming", "working", "streaming",
           "slow streamed reply (small chunks over ~26 s), 3 s in", settle=None)
    time.sleep(3)
    c.rec.send("Escape")
    c.wait_text("Request cancelled")
    c.wait_idle()
    c.shot("idle-after-interrupt", "idle", "after-interrupt",
           "pressed Esc while the reply streamed: 'Request cancelled.'")


def s_big_160(c: Ctx) -> None:
    """160x48, pre-trusted with auth: first token wait, reject an edit, answer ask_user."""
    c.wait_idle()
    c.shot("idle-start", "idle", "start", "pre-trusted folder, auth in settings.json; fresh start")
    c.prompt("take your time and think about the cache invalidation design")
    c.wait_text("esc to cancel")
    time.sleep(3)
    c.shot("working-before-first-token", "working", "waiting-first-token",
           "mock holds the stream (headers sent, no chunk) before the first token", settle=None)
    time.sleep(4)
    c.rec.send("Escape")
    c.wait_idle()
    c.shot("idle-after-interrupt-waiting", "idle", "after-interrupt",
           "pressed Esc while waiting for the first token")
    c.prompt("please create docs/CHANGELOG.md with a release entry")
    c.wait_text("Apply this change?")
    c.shot("blocked-edit", "blocked", "edit-permission",
           "mock calls write_file for a new file: WriteFile diff + 'Apply this change?'")
    c.rec.send("Escape")
    c.wait_idle()
    c.shot("idle-after-reject-esc", "idle", "after-reject",
           "rejected the write with Esc: '→ Rejected', 'Request cancelled.'")
    if older_than(ASK_USER_SINCE):
        return
    c.prompt("let me choose between two designs for the cache layer first")
    c.wait_text("Enter to select")
    c.shot("blocked-ask-user", "blocked", "question",
           "mock calls the ask_user tool: 'Answer Questions' picker")
    c.key("Down")
    c.rec.send("Enter")
    c.wait_idle()
    c.shot("idle-after-answer", "idle", "after-reply",
           "picked option 2 in the ask_user picker; mock sent the final text")


def s_tools_160(c: Ctx) -> None:
    """160x48 again (a separate session keeps each byte prefix short): long tool, slow stream."""
    c.wait_idle()
    c.prompt("please run `sleep 14 && echo integration suite finished` now")
    c.wait_text("Allow execution of")
    c.shot("blocked-shell", "blocked", "shell-permission",
           "shell permission for a long command (160 columns)")
    c.key("Down")
    c.rec.send("Enter")
    c.wait_text("esc to cancel")
    time.sleep(3)
    c.shot("working-tool-running", "working", "tool-running",
           "approved with 'Allow for this session'; the 14 s command runs", settle=None)
    time.sleep(5)
    c.shot("working-tool-running-late", "working", "tool-running",
           "same command 8 s into its run", settle=None)
    c.wait_idle()
    c.shot("idle-after-approve", "idle", "after-approve", "the long command finished")
    c.prompt("explain in detail how the retry loop in main.py behaves")
    c.wait_text("careful walk-through")
    time.sleep(8)
    c.shot("working-streaming", "working", "streaming",
           "slow streamed reply, 8 s after the first chunk", settle=None)
    c.wait_idle()
    c.shot("idle-after-stream", "idle", "after-reply", "the slow reply finished streaming")


def s_wait_80(c: Ctx) -> None:
    """80x24 pre-trusted: a draft in the composer, first-token wait, the web_fetch dialog."""
    c.wait_idle()
    for ch in "refactor the parser into smaller functions":
        c.rec.send(ch, literal=True)
        time.sleep(0.02)
    c.rec.settle(0.6)
    c.shot("idle-draft-input", "idle", "draft-input", "a prompt typed into the composer, not submitted")
    for _ in range(60):      # clear the draft
        c.rec.send("BSpace")
        time.sleep(0.01)
    c.wait_text("Type your message", 10)
    c.prompt("please deliberate on whether the queue needs back-pressure")
    c.wait_text("esc to cancel")
    time.sleep(5)
    c.shot("working-before-first-token", "working", "waiting-first-token",
           "mock holds the stream before the first token (80 columns, 5 s in)", settle=None)
    c.rec.send("Escape")
    c.wait_idle()
    c.prompt("fetch https://example.com/changelog and summarise it")
    c.wait_text("Do you want to proceed?")
    c.shot("blocked-fetch", "blocked", "fetch-permission",
           "mock calls web_fetch: 'Do you want to proceed?' with the URL to fetch")
    c.rec.send("Enter")
    c.wait_idle(timeout=120)
    c.shot("idle-after-fetch", "idle", "after-approve",
           "allowed the fetch once; it failed offline and the mock sent the final text")


def s_untrusted_90(c: Ctx) -> None:
    """90x28, folder NOT trusted ('Don't trust'): dialogs lose their session-wide options."""
    c.wait_trust()
    c.key("Down", "Down")
    c.rec.send("Enter")
    c.wait_idle()
    c.shot("idle-start-untrusted", "idle", "start", "chose 'Don't trust' in the trust dialog")
    c.prompt("please run `sleep 6; date -u` and tell me")
    c.wait_text("Allow execution of")
    c.shot("blocked-shell-untrusted", "blocked", "shell-permission",
           "untrusted folder: the Shell dialog has only 'Allow once' and 'No, suggest changes'")
    c.rec.send("Enter")
    c.wait_text("esc to cancel")
    time.sleep(2)
    c.shot("working-tool-running", "working", "tool-running", "approved; `sleep 6` runs", settle=None)
    c.wait_idle()
    if older_than(ASK_USER_SINCE):
        return
    c.prompt("ask me which option to use for the database")
    c.wait_text("Enter to select")
    c.key("Down", "Down")
    c.rec.send("Enter")
    c.wait_text("Enter to submit")
    c.shot("blocked-ask-user-custom", "blocked", "question",
           "ask_user: chose 'Enter a custom value'; footer 'Enter to submit · Esc to cancel'")
    c.rec.send("Escape")
    c.wait_idle()
    c.shot("idle-after-ask-cancel", "idle", "after-reject", "cancelled the question with Esc")


def s_mid_120(c: Ctx) -> None:
    """120x36, untrusted but auth configured: trust parent, reject shell via 'No', approve edit."""
    c.wait_trust()
    c.shot("blocked-trust-folder", "blocked", "trust-folder", "trust dialog (120 columns)")
    c.key("Down")
    c.rec.send("Enter")
    c.wait_idle()
    c.shot("idle-start-trusted-parent", "idle", "start", "chose 'Trust parent folder'; composer up")
    c.prompt("now run `git status --short > status.txt` and show me")
    c.wait_text("Allow execution of")
    c.shot("blocked-shell", "blocked", "shell-permission", "shell permission dialog (120 columns)")
    c.key("Down", "Down")
    c.rec.send("Enter")
    c.wait_idle()
    c.shot("idle-after-reject-no", "idle", "after-reject",
           "rejected with option 3 'No, suggest changes' (arrows + Enter)")
    c.prompt("write a small test in tests/test_dates.py")
    c.wait_text("Apply this change?")
    c.shot("blocked-edit", "blocked", "edit-permission", "write_file permission (120 columns)")
    c.rec.send("Enter")
    c.wait_idle()
    c.shot("idle-after-approve-edit", "idle", "after-approve", "approved the write with Enter")
    c.prompt("the date parser has a leap year bug, please fix it")
    c.wait_text("regression test?")
    c.wait_idle()
    c.shot("idle-reply-question", "idle", "reply-question",
           "reply ending with 'Would you like me to add a regression test?' (120 columns)")
    if older_than(ASK_USER_SINCE):
        return
    c.prompt("ask me which option to use for the log format")
    c.wait_text("Enter to select")
    c.shot("blocked-ask-user", "blocked", "question", "ask_user picker (120 columns)")
    c.rec.send("Escape")
    c.wait_idle()
    c.shot("idle-after-ask-cancel", "idle", "after-reject", "cancelled the ask_user picker with Esc")


def s_auth_100(c: Ctx) -> None:
    """100x30, trusted folder but no auth and no GEMINI_API_KEY: auth choice + empty key box."""
    scr = c.wait_text("How would you like to authenticate")
    c.rec.settle(0.6)
    c.shot("blocked-auth-method", "blocked", "auth-method",
           "trusted folder, no auth in settings and no GEMINI_API_KEY: auth method choice")
    for _ in range(4):
        if re.search(r"● \d\. Use Gemini API Key", scr):
            break
        c.key("Down")
        scr = c.rec.screen()
    c.rec.send("Enter")
    if older_than(API_KEY_BOX_SINCE):   # no entry box: the dialog stays, with an error
        c.wait_text("GEMINI_API_KEY not found")
        c.rec.settle(0.6)
        c.shot("blocked-auth-method-no-key", "blocked", "auth-method",
               "chose 'Use Gemini API Key' with no GEMINI_API_KEY: the auth dialog stays, "
               "'GEMINI_API_KEY not found' (this release has no key entry box)")
        return
    c.wait_text("Enter Gemini API Key")
    c.rec.settle(0.6)
    c.shot("blocked-api-key-empty", "blocked", "api-key", "API key entry box, empty")
    for ch in "AIzaMockKeyForOfflineTests0123":
        c.rec.send(ch, literal=True)
        time.sleep(0.02)
    c.rec.settle(0.6)
    c.shot("blocked-api-key-typed", "blocked", "api-key", "API key typed into the box, not yet submitted")
    c.rec.send("Enter")
    c.wait_idle()
    c.shot("idle-start", "idle", "start", "key stored; composer up")
    c.prompt("please run `sleep 9 && du -sh .` in the project")
    c.wait_text("Allow execution of")
    c.rec.send("Enter")
    c.wait_text("esc to cancel")
    time.sleep(2)
    c.rec.send("Escape")
    c.wait_idle()
    c.shot("idle-after-interrupt-tool", "idle", "after-interrupt",
           "approved a `sleep 9` command, then pressed Esc while it ran")
    c.prompt("hello, what can you do?")
    c.wait_idle()
    c.shot("idle-after-reply", "idle", "after-reply", "a short one-line reply")


def s_small_70(c: Ctx) -> None:
    """70x20 pre-trusted, true colour: replace edit, wrapped shell dialog, stream at small size."""
    c.wait_idle()
    c.shot("idle-start", "idle", "start", "70x20, COLORTERM=truecolor; fresh start")
    c.prompt("edit main.py: replace the print call please")
    c.wait_text("Apply this change?")
    c.shot("blocked-edit-replace", "blocked", "edit-permission",
           "mock calls replace on an existing file: Edit diff + 'Apply this change?' (small pane)")
    c.key("Down", "Down", "Down")
    c.rec.send("Enter")
    c.wait_idle()
    c.shot("idle-after-reject-no", "idle", "after-reject", "rejected the edit with option 4 'No'")
    c.prompt("execute `find . -name '*.py' -newer README.md -print > changed-files.txt` thanks")
    c.wait_text("Allow execution of")
    c.shot("blocked-shell-wrapped", "blocked", "shell-permission",
           "shell dialog for a long command wrapped at 70 columns")
    c.rec.send("Escape")
    c.wait_idle()
    c.shot("idle-after-reject-esc", "idle", "after-reject", "rejected the command with Esc")
    c.prompt("could you explain in detail what changed-files.txt will contain")
    c.wait_text("careful walk-through")
    time.sleep(12)
    c.shot("working-streaming-late", "working", "streaming",
           "slow reply ~12 s in, text fills the small pane", settle=None)
    c.wait_idle()


SESSIONS = [
    Session("first-run-80", 24, 80, trusted=False, auth=False, project="webshop"),
    Session("big-160", 48, 160, truecolor=False, project="cache-service"),
    Session("tools-160", 48, 160, project="build-tools"),
    Session("wait-80", 24, 80, truecolor=True, project="queue_worker"),
    Session("mid-120", 36, 120, trusted=False, project="date_utils"),
    Session("untrusted-90", 28, 90, trusted=False, project="tokenizer"),
    Session("auth-100", 30, 100, auth=False, env_key=False, project="ledger"),
    Session("small-70", 20, 70, truecolor=True, project="scratchpad"),
]
RUNS = {"first-run-80": s_first_run_80, "big-160": s_big_160, "tools-160": s_tools_160,
        "wait-80": s_wait_80, "mid-120": s_mid_120, "untrusted-90": s_untrusted_90,
        "auth-100": s_auth_100, "small-70": s_small_70}


def make_home(sess: Session, home: Path, proj: Path) -> None:
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


def run_session(sess: Session, mock: common.Mock, only: str | None, index: dict) -> list[str]:
    base = AGENTS / f"gemini-run-{common.stamp(sess)}"
    home = base / "home"
    proj = base / sess.project
    make_home(sess, home, proj)
    env = {"HOME": str(home), "GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{mock.port}",
           **common.tmux_env()}
    if sess.env_key:
        env["GEMINI_API_KEY"] = "mock-gemini-key-not-real"
    if sess.truecolor:
        env["COLORTERM"] = "truecolor"
    return common.run_session(sess, lambda rec: Ctx(sess, rec, only, index), RUNS[sess.name],
                              base=base, home=home, cmd=[str(GEMINI_BIN)], env=env, cwd=proj)


def capture(only: str | None) -> None:
    common.capture(only, agent="gemini", sessions=SESSIONS, out=OUT, bin_=GEMINI_BIN,
                   install=install, run=run_session,
                   start_mock=lambda log: common.Mock("mock_gemini.py", log, slow=26, delay=35),
                   title="# Real Gemini CLI captures; written by harness/gemini.py (do not edit by hand).")


def main() -> None:
    common.main(__doc__, install=install, capture=capture, sessions=SESSIONS, configure=configure,
                describe=lambda s: f"{s.name:14s} {s.cols}x{s.rows} trusted={s.trusted} auth={s.auth} "
                                   f"env_key={s.env_key} project={s.project}")


if __name__ == "__main__":
    main()