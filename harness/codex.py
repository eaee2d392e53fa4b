#!/usr/bin/env python3
"""Capture real OpenAI Codex CLI fixtures against the mock model server.

    python harness/codex.py install                 # npm install the pinned @openai/codex
    python harness/codex.py capture [--only NAME]   # run the scenarios, write fixtures/codex/
    python harness/codex.py list                    # the sessions and the fixtures they make

Each session runs the real CLI in a private tmux server (harness/tmuxrec.py) with a throwaway
CODEX_HOME and project folder under /work/agents (CODEX_HOME must not be under /tmp), talking to
harness/mock_openai.py. It drives the CLI with keys, waits on tmux's own screen/title for the
state, and snapshots the full byte prefix so far as fixtures/codex/<name>.raw (+ .screen.txt).
`--only` takes a session name or a fixture name (the whole session that makes it is run, and
only the fixtures matching the name are rewritten). index.toml is merged, not replaced.

Processes: Codex starts a background `app-server` daemon from CODEX_HOME. After each session we
kill, by PID, every process whose command line or environment names that session's unique
CODEX_HOME (never by process name: other agents run on this machine).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
# AGENTS, kill_pids, pids_naming are also used by tests/test_real_agents.py and scripts/
from common import AGENTS, REPO, kill_pids, pids_naming  # noqa: E402,F401

PINNED = "0.171.0"           # the release the rules were derived from (fixtures/codex/)
VERSION = PINNED
PREFIX = AGENTS / f"codex-{VERSION}"
CODEX_BIN = PREFIX / "node_modules" / ".bin" / "codex"
OUT = REPO / "fixtures" / "codex"
MODEL = "gpt-5-mock"         # unknown to Codex: plain function tools (exec_command), no GPT-6 code mode
BRAILLE = re.compile(r"[\u2800-\u28ff]")
OSC_RE = re.compile(rb"\x1b\](\d+);(.*?)(?:\x07|\x1b\\)", re.S)


def older_than(v: str) -> bool:
    """True when the release being driven (VERSION) is older than `v`."""
    return common.vtuple(VERSION) < common.vtuple(v)


def configure(version: str | None, out: Path | None) -> None:
    """`--version V` / `--out DIR` (common.main): point the install prefix, the binary and the
    fixture folder at another release; the pinned release keeps fixtures/codex/."""
    global VERSION, PREFIX, CODEX_BIN, OUT
    if version:
        VERSION = version
        PREFIX = AGENTS / f"codex-{VERSION}"
        CODEX_BIN = PREFIX / "node_modules" / ".bin" / "codex"
    OUT = out or (REPO / "fixtures" / "codex" if VERSION == PINNED
                  else common.release_out("codex", VERSION))
    Ctx.version, Ctx.out = VERSION, OUT  # bound at class definition


# -- what differs by release (each seen on real captures; NOTES-codex.md has the details) --------
# A "since" release is the oldest release we captured that has the thing, not when it appeared.
def by_release(table: list[tuple[str, object]]):
    """The value for VERSION in a newest-first [(release, value), ...] table: that of the newest
    release listed that is not newer than VERSION (the last entry for anything older)."""
    for since, value in table:
        if not older_than(since):
            return value
    return table[-1][1]


# OSC 7501 state reports: 0.171.0 only (none in 0.153.4, 0.142.5, 0.64.0)
OSC7501_SINCE = "0.171.0"
# braille spinner / Action Required in the title: 0.142.5 on (0.64.0 sets no title at all)
TITLE_SPINNER_SINCE = "0.142.5"
# the composer's footer with nothing running: '100% context left · ? for shortcuts' (0.64.0),
# '? for shortcuts' (0.171.0); 0.142.5 / 0.153.4 show only a status line
# '  <model> <effort> · <cwd>' (STATUS_LINE) under the composer (also while a turn runs)
IDLE_FOOTERS = ("? for shortcuts", "shift+tab to cycle")
STATUS_LINE = re.compile(r"^  \S+ (minimal|low|medium|high|xhigh|default) · [/~]", re.M)
# 0.64.0 after Ctrl+C interrupted a turn: the footer stays 'ctrl + c again to quit' (idle)
CTRL_C_FOOTER = "ctrl + c again to quit"
# the folder-trust dialog's heading
TRUST_NEEDLE = [("0.171.0", "Trust this folder"),
                ("0.142.5", "Do you trust the contents of this directory"),  # 0.142.5, 0.153.4
                ("0.0.0", "You are running Codex in")]                        # 0.64.0
# 0.64.0 shows the trust dialog only when config.toml sets no approval_policy / sandbox_mode;
# there the driver answers "2. No, ask me to approve edits and commands" (read-only sandbox,
# approvals for every edit and non-trivial command; "Yes" would allow edits without a dialog)
TRUST_WITHOUT_POLICY_UNTIL = "0.142.5"
TRUST_ANSWER = [("0.142.5", None), ("0.0.0", "No, ask me to approve")]
# 0.64.0 at 80x24: the welcome animation pushes the trust options below the screen's last row;
# option 2 of 2 is then chosen blind with Down, Enter
# 0.153.4 and older draw a streamed reply only a whole line at a time: a one-paragraph reply shows
# nothing until it ends. The slow prompts then ask the mock for "line by line" (one sentence per
# paragraph) so the streaming screen has text on it.
LINE_STREAM_UNTIL = "0.171.0"
# the key that interrupts a turn while reply text streams: 0.153.4, 0.142.5 and 0.64.0 (checked
# by hand) ignore Esc then (their status row, which takes the Esc, is hidden while text
# streams); Ctrl+C interrupts there
STREAM_INTERRUPT_KEY = [("0.171.0", "Escape"), ("0.0.0", "C-c")]
# 0.142.5: Esc before the first token cancels the turn and puts the prompt back into the
# composer (no "Conversation interrupted"); the next prompt would be typed after it. Older
# releases get a Ctrl+U (clear the line; harmless when empty) before each prompt.
CLEAR_COMPOSER_UNTIL = "0.171.0"
# a configured model for which Codex shows its model-migration dialog at start
UPGRADE_MODEL = [("0.171.0", "gpt-5.5"),         # "Meet GPT-6 Sol"
                 ("0.153.4", "gpt-5.4"),         # "GPT-5.4 is no longer available" -> 5.6 Terra
                 ("0.142.5", "gpt-5.2"),         # "Introducing GPT-5.4"
                 ("0.0.0", "gpt-5.1-codex")]     # "Introducing gpt-5.1-codex-max"
# Plan mode (Shift+Tab) and its request_user_input question picker: not in 0.64.0
PLAN_MODE_SINCE = "0.142.5"
# the sign-in menu's "Sign in another way" (API key / Bedrock) sub-menu: 0.171.0; older menus list
# "Provide your own API key" directly
SIGNIN_OTHER_WAY_SINCE = "0.171.0"
# what the model-migration dialogs of the older releases say (any one of these)
UPGRADE_NEEDLES = ("Try new model", "Use existing model", "Introducing", "no longer available",
                   "just got an upgrade")


def slow(prompt: str) -> str:
    """A prompt for the mock's slow streamed reply, in the shape this release can show."""
    return prompt + " line by line" if older_than(LINE_STREAM_UNTIL) else prompt


# ----------------------------------------------------------------------------------------------
def install() -> None:
    common.npm_install(PREFIX, CODEX_BIN, "@openai/codex", VERSION)


def osc_facts(raw: bytes) -> dict:
    """Last title (OSC 0/2) and last OSC 7501 payload in a byte stream."""
    title, state = None, None
    for m in OSC_RE.finditer(raw):
        code, payload = m.group(1), m.group(2).decode("utf-8", "replace")
        if code in (b"0", b"2"):
            title = payload
        elif code == b"7501":
            state = payload
    return {"title": title, "osc_state": state}


# ----------------------------------------------------------------------------------------------
class Mock(common.Mock):
    def __init__(self, log: Path):
        super().__init__("mock_openai.py", log, slow=28, delay=30)


# ----------------------------------------------------------------------------------------------
@dataclass
class Shot:
    name: str
    state: str
    kind: str
    how: str


@dataclass
class Session:
    name: str
    rows: int
    cols: int
    trusted: bool = True          # pre-trust the project folder in config.toml
    provider: bool = True         # configure the mock provider (False: sign-in screen)
    model: str = MODEL
    run: Callable = None          # run(ctx)
    upgrade: bool = False         # model = the release's UPGRADE_MODEL
    since: str = "0.0.0"          # the oldest release this session can run on
    why_not: str = ""             # why not on older ones (printed when skipped)
    retries: int | None = None    # cap the provider's request/stream retries (error sessions)
    mcp: bool = False             # give the session harness/mcp_stub.py as MCP server `stub` (-c)
    args: tuple = ()              # extra command-line arguments (e.g. --no-alt-screen)
    shots: list[str] = field(default_factory=list)  # fixture names it makes (for --only / list)


class Ctx(common.TitleCtx):
    """What a session's script gets: the recording plus snapshot / wait helpers."""

    agent, version, out = "codex", VERSION, OUT
    settle = 0.5
    columns = (45, 28, 7)

    mock_log: Path | None = None  # the mock's request log (run_session sets it)

    @property
    def osc(self) -> bool:
        """Does this release write OSC 7501 state reports?"""
        return not older_than(OSC7501_SINCE)

    def footer(self, s: str) -> bool:
        return any(f in s for f in IDLE_FOOTERS) or (older_than(PINNED) and (
            bool(STATUS_LINE.search(s)) or CTRL_C_FOOTER in s))

    def pick(self, label: str, tries: int = 8) -> None:
        """Move a numbered menu's cursor ('› 2. …') to the option containing `label`, press Enter.
        (Option counts differ by release: 0.64.0's edit dialog has 2 options, later ones 3.)"""
        sel = re.compile(r"^\s*[›>]\s*\d+\.")
        for _ in range(tries):
            rows = self.rec.screen().splitlines()
            cur = next((i for i, r in enumerate(rows) if sel.match(r)), None)
            want = next((i for i, r in enumerate(rows)
                         if label in r and re.match(r"^\s*[›>]?\s*\d+\.", r)), None)
            if cur is None or want is None:
                raise TimeoutError(f"[{self.s.name}] no menu option {label!r}\n" + "\n".join(rows))
            if cur == want:
                self.rec.send("Enter")
                return
            self.rec.send("Down" if want > cur else "Up")
            time.sleep(0.35)
        raise TimeoutError(f"[{self.s.name}] could not select {label!r}")

    def choose_no(self) -> None:
        """Pick the approval dialog's 'No, and tell Codex what to do differently' with the arrows.
        0.171.0: Down, Down, Enter (option 3 of 3); older releases: by its label (0.64.0's edit
        dialog has two options only)."""
        if VERSION == PINNED:
            for k in ("Down", "Down"):
                self.rec.send(k)
                time.sleep(0.3)
            self.rec.send("Enter")
        else:
            self.pick("No, and tell Codex")

    def stream_how(self, how: str) -> str:
        """A streaming shot's description; older releases get the line-by-line reply."""
        if not older_than(LINE_STREAM_UNTIL):
            return how
        return how.split(";")[0] + "; mock 'line by line': one sentence per paragraph"

    def trust(self, how: str) -> None:
        """Wait for the folder-trust dialog, shoot it, answer it (the answer depends on the release)."""
        needle = by_release(TRUST_NEEDLE)  # the question wraps on a narrow pane: rows rejoined
        self.wait(lambda s, t: needle in " ".join(s.split()), f"trust question {needle!r}", 30)
        self.shot("blocked-trust-folder", "blocked", "trust-folder", how)
        answer = by_release(TRUST_ANSWER)
        if answer and answer not in self.rec.screen():
            self.key("Down", "Enter")
        elif answer:
            self.pick(answer)
        else:
            self.rec.send("Enter")

    def mock_requests(self) -> tuple[int, int]:
        """(POSTs the mock got, of those still unanswered), from its JSON-lines log."""
        posts, ended = set(), set()
        for line in (self.mock_log.read_text().splitlines() if self.mock_log else []):
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if e.get("method") == "POST":
                posts.add(e["id"])
            elif "done" in e or "client_gone" in e:
                ended.add(e["id"])
        return len(posts), len(posts - ended)

    def wait_idle(self, timeout: float = 90) -> str:
        """Turn over: composer footer up, no spinner / Action Required in the title. With OSC
        7501 (0.171.0...) also its last state idle/done; without it (older releases) no
        request of the mock still open and the screen so for 1.5 s."""
        def quiet(s: str, t: str) -> bool:
            return (self.footer(s) and not BRAILLE.search(t) and "Action Required" not in t
                    and "esc to interrupt" not in s)
        if self.osc:
            def done(s: str, t: str) -> bool:
                last = (self.osc_states() or [""])[-1]
                return quiet(s, t) and last.startswith(("state=idle", "state=done"))
            return self.wait(done, "idle", timeout)
        since = [None]

        def done_quiet(s: str, t: str) -> bool:
            if not (quiet(s, t) and self.mock_requests()[1] == 0):
                since[0] = None
                return False
            since[0] = since[0] or time.time()
            return time.time() - since[0] >= 1.5
        return self.wait(done_quiet, "idle (no OSC 7501)", timeout)

    def wait_working_title(self, timeout: float = 30) -> str:
        if older_than(TITLE_SPINNER_SINCE):
            return self.wait_text("esc to interrupt", timeout)
        return self.wait(lambda s, t: bool(BRAILLE.search(t)), "spinner title", timeout)

    def osc_states(self, since: int = 0) -> list[str]:
        raw = self.rec.raw.read_bytes()[since:]
        return [m.group(2).decode("utf-8", "replace") for m in OSC_RE.finditer(raw)
                if m.group(1) == b"7501"]

    def wait_ready(self, timeout: float = 60) -> str:
        """Composer up and Codex's startup finished (it has sent its first OSC 7501 state;
        without OSC 7501: the footer is up and the stream quiet)."""
        if self.osc:
            scr = self.wait(lambda s, t: self.footer(s) and any(
                x.startswith("state=idle") for x in self.osc_states()), "ready", timeout)
        else:
            scr = self.wait(lambda s, t: self.footer(s), "ready (footer)", timeout)
            self.rec.settle(1.5, timeout=15)
        self.rec.settle(0.8, timeout=10)
        return scr

    def prompt(self, text: str) -> None:
        """Type a prompt and make sure it was submitted (a turn started: OSC state=working;
        without OSC 7501: the mock got a new request)."""
        if self.osc:
            self.type_and_submit(text, lambda mark: any(x.startswith("state=working")
                                                        for x in self.osc_states(mark)))
            return
        if older_than(CLEAR_COMPOSER_UNTIL):
            self.rec.send("C-u")
            time.sleep(0.3)
        self.rec.type(text, enter=False, delay=0.01)
        time.sleep(0.5)
        self.submit(text, lambda m: self.mock_requests()[0] > m,
                    mark=lambda: self.mock_requests()[0])

    def take(self, dest: Path, settle: float | None) -> dict:
        """Older releases animate screens that never go quiet (0.64.0's welcome art under the
        trust / sign-in screens): wait up to the settle time, then copy exactly the bytes of a
        40 ms quiet window, so the .screen.txt is the screen of the copied prefix. The pinned
        release keeps the plain snapshot."""
        if VERSION == PINNED:
            return super().take(dest, settle)
        if not settle:   # a working screen redraws every 80 ms (spinner, timer, title): be quick
            return self.snapshot_checked(dest)
        self.rec.settle(settle)
        try:
            return self.rec.snapshot_quiet(dest, settle=None)
        except TimeoutError:
            return self.snapshot_checked(dest)

    def snapshot_checked(self, dest: Path, tries: int = 40) -> dict:
        """Copy the bytes seen around a capture-pane, keep them once our emulator replays them to
        exactly tmux's screen (the same check as tests/test_fixtures.py)."""
        sys.path.insert(0, str(REPO))
        from tmux_agentstate.core.screen import replay
        for _ in range(tries):
            time.sleep(0.06)   # let `cat` flush what tmux already handed it
            n0 = self.rec.raw.stat().st_size
            scr = self.rec.screen()
            data = self.rec.raw.read_bytes()[:n0]
            want = [r.rstrip() for r in scr.split("\n")]
            want = (want + [""] * self.s.rows)[: self.s.rows]
            if replay(data, self.s.rows, self.s.cols).rows() == want:
                dest.write_bytes(data)
                return {"bytes": n0, "tmux_screen": scr, "title": self.rec.title()}
        raise TimeoutError(f"no snapshot of {dest.name} replays to tmux's screen")

    def detail(self, facts: dict, dest: Path) -> str:
        of = osc_facts(dest.read_bytes())
        return f" title={facts['title']!r} osc={of['osc_state']!r}"


# ----------------------------------------------------------------------------------------------
# session scripts

def s_first_run_80(c: Ctx) -> None:
    """80x24, untrusted git folder: trust dialog, then a full tour of the basic states."""
    c.trust("first run in a git folder not yet in config: Codex asks to trust it")
    c.wait_ready()
    c.shot("idle-start", "idle", "start", "trusted the folder with Enter; empty composer"
           if not by_release(TRUST_ANSWER) else
           f"answered the trust dialog '{by_release(TRUST_ANSWER)}…'; empty composer")
    c.prompt("could you run `mkdir -p dist && cp main.py dist/` for me")
    c.wait_text("Would you like to run the following command")
    c.shot("blocked-command", "blocked", "command-approval",
           "mock calls exec_command with sandbox_permissions=require_escalated; approval dialog up")
    c.rec.send("y")
    c.wait_text("You approved")
    c.wait_idle()
    c.shot("idle-after-command", "idle", "after-approved-command",
           "approved the command with y; it ran and the mock sent a short final reply")
    c.prompt("please add a slugify helper to utils/strings.py")
    c.wait_text("Would you like to make the following edits")
    c.shot("blocked-edit", "blocked", "edit-approval",
           "mock calls apply_patch (via exec_command) adding a file under the read-only sandbox")
    c.rec.send("Escape")
    c.wait_idle()
    c.shot("idle-after-reject-esc", "idle", "after-reject",
           "rejected the edit approval with Esc; turn ended, composer back")
    c.prompt("there is an off-by-one bug in main.py, can you fix it")
    c.wait_text("regression test?")
    c.wait_idle()
    c.shot("idle-question", "idle", "reply-question",
           "ordinary reply ending with 'Would you like me to add a regression test?'")
    c.prompt(slow("walk me through the startup code slowly"))
    c.wait_working_title()
    c.wait_text("careful walk-through")
    time.sleep(3)
    c.shot("working-streaming", "working", "streaming",
           c.stream_how("slow streamed reply (deltas over ~28 s); no working row, title spinner only"),
           settle=None)
    time.sleep(4)
    key = by_release(STREAM_INTERRUPT_KEY)
    c.rec.send(key)
    c.wait_text("Conversation interrupted") if key != "Escape" else None
    c.wait_idle()
    c.shot("idle-after-interrupt-stream", "idle", "after-interrupt",
           "pressed Esc while the reply was streaming; turn interrupted" if key == "Escape" else
           f"pressed {key} while the reply was streaming (Esc does nothing then); turn interrupted")


def s_big_160(c: Ctx) -> None:
    """160x48, pre-trusted: waiting for the first token, a long tool run, reject by 'no'."""
    c.wait_ready()
    c.shot("idle-start", "idle", "start", "pre-trusted folder; fresh start, empty composer")
    c.prompt("take your time and think about the cache invalidation design")
    c.wait_text("esc to interrupt")
    time.sleep(2)
    c.shot("working-before-first-token", "working", "waiting-first-token",
           "mock holds the response (keep-alives only) before the first token; Working row up",
           settle=None)
    time.sleep(6)
    c.shot("working-before-first-token-late", "working", "waiting-first-token",
           "same wait, 8 s in (timer and spinner advanced)", settle=None)
    c.rec.send("Escape")
    c.wait_idle()
    c.shot("idle-after-interrupt-waiting", "idle", "after-interrupt",
           "pressed Esc while waiting for the first token")
    c.prompt("please run `sleep 20 && echo integration suite finished` now")
    c.wait_text("Would you like to run the following command")
    c.shot("blocked-command-long", "blocked", "command-approval",
           "escalated exec_command approval for a long command (160 columns)")
    c.rec.send("Enter")
    c.wait_text("You approved")
    c.wait_text("esc to interrupt", timeout=20)
    time.sleep(3)
    c.shot("working-tool-running", "working", "tool-running",
           "approved with Enter; `sleep 20 && echo ...` running, Working row up", settle=None)
    time.sleep(5)
    c.shot("working-tool-running-late", "working", "tool-running",
           "same command 8 s into its run", settle=None)
    c.wait_idle(timeout=60)
    c.shot("idle-after-command", "idle", "after-approved-command",
           "the long command finished; mock sent the final text")
    c.prompt("create docs/CHANGELOG.md with a release entry")
    c.wait_text("Would you like to make the following edits")
    c.shot("blocked-edit", "blocked", "edit-approval",
           "apply_patch adding docs/CHANGELOG.md under the read-only sandbox (160 columns)")
    # choose "No, and tell Codex what to do differently" with the arrow keys
    c.choose_no()
    c.wait_idle()
    c.shot("idle-after-reject-no", "idle", "after-reject",
           "rejected the edit by choosing the 'No, and tell Codex…' option with arrows + Enter")
    c.prompt(slow("explain in detail how the retry loop in main.py behaves"))
    c.wait_working_title()
    c.wait_text("careful walk-through")
    time.sleep(6)
    c.shot("working-streaming", "working", "streaming",
           c.stream_how("slow streamed reply, 6 s after the first delta; no working row, title "
                        "spinner only"), settle=None)
    c.wait_idle(timeout=60)
    c.shot("idle-after-stream", "idle", "after-reply",
           "the slow reply finished streaming")


def s_mid_120(c: Ctx) -> None:
    """120x36 untrusted: trust dialog declined? No: trust, then question + command reject via no."""
    c.trust("first run in an untrusted git folder (120 columns)")
    c.wait_ready()
    c.prompt("the date parser has a bug with leap years, please fix it")
    c.wait_text("regression test?")
    c.wait_idle()
    c.shot("idle-question", "idle", "reply-question",
           "reply ending in a question, in a fresh session (120 columns)")
    c.prompt("now run `git status --short > status.txt` and show me")
    c.wait_text("Would you like to run the following command")
    c.shot("blocked-command", "blocked", "command-approval",
           "escalated command approval after an earlier question reply")
    c.choose_no()
    c.wait_idle()
    c.shot("idle-after-reject-no", "idle", "after-reject",
           "rejected the command by choosing option 3 ('No, …') with arrows + Enter")
    c.prompt("write a small test in tests/test_dates.py")
    c.wait_text("Would you like to make the following edits")
    c.shot("blocked-edit", "blocked", "edit-approval", "edit approval (120 columns)")
    c.rec.send("Escape")
    c.wait_idle()
    c.prompt("please think through whether the API needs pagination")
    c.wait_text("esc to interrupt")
    time.sleep(1)
    c.shot("working-before-first-token", "working", "waiting-first-token",
           "Working row while the mock delays the first token (120 columns)", settle=None)
    c.rec.send("Escape")
    c.wait_idle()


def s_signin(c: Ctx) -> None:
    """No provider configured and no credentials: the sign-in screen."""
    c.wait(lambda s, t: "Sign in" in s or "sign in" in s or "API key" in s, "sign-in screen", 30)
    time.sleep(1)
    c.shot("blocked-sign-in", "blocked", "sign-in",
           "no model provider and no credentials in CODEX_HOME: Codex shows its sign-in screen")


def s_upgrade(c: Ctx) -> None:
    """A known model with an upgrade path: the model-migration dialog on start."""
    if VERSION == PINNED:
        c.wait(lambda s, t: "1. Try new model" in s or "Try new model" in s, "model migration", 30)
        c.shot("blocked-model-upgrade", "blocked", "model-upgrade",
               "config names a model Codex wants to upgrade: 'Meet …' dialog with Try new / Use existing")
        c.rec.send("Down")
        time.sleep(0.3)
        c.rec.send("Enter")
    else:  # the dialog's wording and options differ by release (UPGRADE_MODEL)
        c.wait(lambda s, t: any(x in s for x in UPGRADE_NEEDLES), "model migration", 30)
        c.rec.settle(0.6)
        c.shot("blocked-model-upgrade", "blocked", "model-upgrade",
               f"config names {by_release(UPGRADE_MODEL)}, a model Codex wants to migrate: "
               "its model-migration dialog on start")
        if "Use existing model" in c.rec.screen():
            c.pick("Use existing model")
        else:
            c.rec.send("Enter")
    c.wait_ready()
    c.shot("idle-start-after-upgrade-dialog", "idle", "start",
           "chose 'Use existing model'; idle composer")


def s_plan_question(c: Ctx) -> None:
    """Plan mode (Shift+Tab): the model's request_user_input question dialog."""
    c.wait_ready()
    c.rec.send("BTab")
    c.wait_text("Plan mode")
    c.rec.settle(0.6)
    c.shot("idle-plan-mode", "idle", "start", "switched to Plan mode with Shift+Tab; idle composer")
    c.prompt("before changing the logger, ask me which option you should use" if c.s.cols < 120
             else "let me choose between two designs for the cache layer first")
    c.wait_text("enter to submit answer")
    c.shot("blocked-question", "blocked", "question",
           "Plan mode: mock calls request_user_input; Codex's question picker (footer still says "
           "'esc to interrupt')")
    c.rec.send("Enter")
    c.wait_idle()
    c.shot("idle-after-question-answered", "idle", "after-reply",
           "answered the question with Enter; mock replied with short final text")


def s_signin_paths(c: Ctx) -> None:
    """The sign-in screen's sub-screens: other ways, API key entry, browser login wait."""
    if older_than(SIGNIN_OTHER_WAY_SINCE):
        return s_signin_paths_flat(c)
    c.wait_text("Sign in with ChatGPT", 30)
    c.rec.settle(0.6)
    c.shot("blocked-sign-in", "blocked", "sign-in", "no provider, no credentials: sign-in menu")
    c.rec.send("Down")
    time.sleep(0.3)
    c.rec.send("Down")
    time.sleep(0.3)
    c.rec.send("Enter")
    c.wait_text("Use an OpenAI API key")
    c.rec.settle(0.6)
    c.shot("blocked-sign-in-other-way", "blocked", "sign-in",
           "sign-in menu -> 'Sign in another way': API key / Bedrock choice")
    c.rec.send("Enter")
    c.wait_text("Paste or type your API key")
    c.rec.settle(0.6)
    c.shot("blocked-sign-in-api-key", "blocked", "sign-in", "API key entry box")
    for _ in range(2):
        c.rec.send("Escape")
        time.sleep(0.6)
    c.wait_text("Sign in with Device Code")
    c.rec.send("Up")
    time.sleep(0.3)
    c.rec.send("Up")
    time.sleep(0.3)
    c.rec.send("Enter")
    c.wait_text("Finish signing in via your browser")
    c.rec.settle(0.6)
    c.shot("blocked-sign-in-browser", "blocked", "sign-in",
           "chose 'Sign in with ChatGPT': waiting for the browser login (local callback server)")


def s_signin_paths_flat(c: Ctx) -> None:
    """Releases whose sign-in menu lists the API key directly (0.153.4 and older): menu, API key
    entry, browser login wait."""
    c.wait_text("Sign in with ChatGPT", 30)
    c.rec.settle(0.6)
    c.shot("blocked-sign-in", "blocked", "sign-in", "no provider, no credentials: sign-in menu")
    c.pick("Provide your own API key")
    c.wait_text("Paste or type your API key")
    c.rec.settle(0.6)
    c.shot("blocked-sign-in-api-key", "blocked", "sign-in",
           "sign-in menu -> 'Provide your own API key': API key entry box")
    c.rec.send("Escape")
    c.wait(lambda s, *_: re.search(r"^\s*[›>]\s*\d\. Sign in with ChatGPT", s, re.M) is not None
           or "Provide your own API key" in s, "sign-in menu again", 15)
    time.sleep(0.5)
    c.pick("Sign in with ChatGPT")
    c.wait_text("Finish signing in via your browser")
    c.rec.settle(0.6)
    c.shot("blocked-sign-in-browser", "blocked", "sign-in",
           "chose 'Sign in with ChatGPT': waiting for the browser login (local callback server)")


def s_tools_80(c: Ctx) -> None:
    """80x24 again, other commands: a sandboxed tool run interrupted, a wrapped long command."""
    c.wait_ready()
    c.prompt("in the sandbox, run `sleep 15; ls -la src` to check the layout")
    c.wait_text("esc to interrupt")
    time.sleep(3)
    c.shot("working-tool-sandboxed", "working", "tool-running",
           "non-escalated exec_command (sleep) running inside the read-only sandbox, no approval",
           settle=None)
    c.rec.send("Escape")
    c.wait_idle()
    c.shot("idle-after-interrupt-tool", "idle", "after-interrupt",
           "pressed Esc while the sandboxed command was running")
    c.prompt("execute `sleep 12 && find . -name '*.py' -newer README.md -print > changed-files.txt` thanks")
    c.wait_text("Would you like to run the following command")
    c.shot("blocked-command-wrapped", "blocked", "command-approval",
           "escalated approval for a long command that wraps at 80 columns")
    c.rec.send("Enter")
    c.wait_text("You approved")
    c.wait_text("esc to interrupt", timeout=20)
    time.sleep(4)
    c.shot("working-tool-running", "working", "tool-running",
           "approved with Enter; the 12 s command is running", settle=None)
    c.wait_idle(timeout=60)
    c.shot("idle-after-command-long", "idle", "after-approved-command",
           "the approved long command finished; final text shown")
    c.prompt(slow("could you explain in detail what changed-files.txt will contain"))
    c.wait_working_title()
    c.wait_text("careful walk-through")
    time.sleep(12)
    c.shot("working-streaming-late", "working", "streaming",
           c.stream_how("slow reply ~12 s into streaming (text fills the screen); no working row"),
           settle=None)
    c.wait_idle(timeout=60)
    c.shot("idle-after-stream", "idle", "after-reply", "the slow reply finished")


# turns that end in an error (mock_openai.py TURN_ERRORS): (keyword, mark, what the mock sends)
TURN_ERROR_CASES = [
    ("RATELIMITED", "rate-limit", "HTTP 429 rate_limit_exceeded on every call"),
    ("NOQUOTA", "quota", "HTTP 429 insufficient_quota"),
    ("USAGELIMIT", "quota", "HTTP 429 usage_limit_reached"),
    ("SATURATED", "overloaded", "HTTP 503 server_is_overloaded on every call"),
    ("BADKEY", "auth", "HTTP 401 invalid_api_key"),
]
EXPLORE = bool(os.environ.get("AGENTSTATE_EXPLORE"))  # print every new screen of the error
# turns (to see what Codex draws; no working shots then)


ENDED = ("state=idle", "state=done", "state=error")


def s_errors(c: Ctx) -> None:
    """Each error kind in turn; working shots while Codex retries ('Reconnecting…'), idle once
    the turn ended in the error."""
    c.wait_ready()
    order = TURN_ERROR_CASES if c.s.cols < 120 else TURN_ERROR_CASES[::-1]
    for kw, mark, what in order:
        c.prompt(f"summarise the open issues {kw}")
        t0, last, retry_shot = time.time(), None, False
        while time.time() - t0 < 90:
            scr, title = c.rec.screen(), c.rec.title()
            if EXPLORE and scr != last:
                print(f"--- {kw} t={time.time() - t0:.1f} title={title!r}")
                print("\n".join(r for r in scr.splitlines() if r.strip()), flush=True)
                last = scr
            # 0.171.0 shows a retry row only for some errors (401: "• Reconnecting... 2/5 (1s •
            # esc to interrupt)" over "  └ Unexpected status 401 Unauthorized: …"); 429 and
            # 503 are retried under the plain "• Working" row
            if (not retry_shot and "Reconnecting" in scr and "esc to interrupt" in scr
                    and "└ Unexpected status" in scr and not EXPLORE):
                name = f"working-{mark}-retry-{kw.lower()}"
                c.shot(name, "working", f"{mark}-retry",
                       f"the mock answers {what}: Codex retries ('Reconnecting… n/N')",
                       settle=None)
                full = f"{c.s.cols}x{c.s.rows}-{name}"
                saved = c.out / f"{full}.screen.txt"
                # between two attempts the row is briefly "• Working" again: keep only a shot
                # that shows the retry row
                retry_shot = saved.exists() and "└ Unexpected status" in saved.read_text()
                if not retry_shot and full in c.made:
                    c.made.remove(full)
                    c.index.pop(full, None)
                    for ext in (".raw", ".screen.txt"):
                        (c.out / f"{full}{ext}").unlink(missing_ok=True)
            states = c.osc_states()
            if time.time() - t0 > 2 and states and states[-1].startswith(ENDED):
                break
            time.sleep(0.2)
        # a turn that failed ends with OSC 7501 state=error (not idle / done)
        c.wait(lambda s, t: c.footer(s) and not BRAILLE.search(t) and "esc to interrupt" not in s
               and (c.osc_states() or [""])[-1].startswith(ENDED), "turn ended", 60)
        c.rec.settle(0.6)
        c.shot(f"idle-{mark}-{kw.lower()}", "idle", mark,
               f"the mock answers {what}: the turn ended in the error")
        for name in c.made:  # the index entries of this turn's shots carry the mark
            if name.endswith(f"-{mark}-{kw.lower()}") or name.endswith(f"-retry-{kw.lower()}"):
                c.index[name]["mark"] = mark


def s_mcp(c: Ctx) -> None:
    """An MCP server (harness/mcp_stub.py, passed with -c mcp_servers.stub=…) whose destructive
    tool the mock calls: Codex's MCP tool-call approval form."""
    c.wait_ready()
    c.prompt("please use the mcp tool deploy_preview for this branch")
    c.wait_text("enter to submit", timeout=60)
    c.shot("blocked-mcp-approval", "blocked", "mcp-approval",
           "mock calls mcp__stub__deploy_preview (destructive, open-world MCP tool): Codex's "
           "approval form ('Field 1/1', 'enter to submit | esc to cancel')")
    c.rec.send("Escape")
    c.wait_idle()
    c.shot("idle-after-mcp-cancel", "idle", "after-reject",
           "cancelled the MCP approval form with Esc; turn ended, composer back")


def s_trust_narrow(c: Ctx) -> None:
    """A narrow pane, untrusted folder: the trust question wraps over several rows."""
    c.trust(f"first run in an untrusted git folder on a narrow pane ({c.s.cols} columns): the "
            "question wraps over several rows")
    # a narrow composer drops its '? for shortcuts' footer: wait for the composer itself
    c.wait(lambda s, t: "Ask Codex" in s or (c.osc and any(
        x.startswith("state=idle") for x in c.osc_states())), "composer", 60)
    c.rec.settle(1.5, timeout=15)
    c.shot("idle-start", "idle", "start", "answered the trust question; empty composer (narrow)")


def s_inline(c: Ctx) -> None:
    """--no-alt-screen (inline: history goes to the terminal's scrollback): turns with a tool
    run and a working row, then the finished turn ('Worked for …' divider) must read idle."""
    c.wait_ready()
    c.shot("idle-start-inline", "idle", "start", "--no-alt-screen; fresh start, empty composer")
    c.prompt("in the sandbox, run `sleep 6; ls -la` to check the layout")
    c.wait_text("esc to interrupt")
    time.sleep(3)
    c.shot("working-tool-sandboxed-inline", "working", "tool-running",
           "--no-alt-screen: sandboxed command running, Working row up", settle=None)
    c.wait_idle(timeout=60)
    c.shot("idle-after-command-inline", "idle", "after-approved-command",
           "--no-alt-screen: the command finished, final text and 'Worked for …' shown")
    c.prompt(slow("walk me through the startup code slowly"))
    c.wait_working_title()
    c.wait_idle(timeout=60)
    c.shot("idle-after-stream-inline", "idle", "after-reply", "--no-alt-screen: the slow reply finished")


SESSIONS = [
    Session("first-run-80", 24, 80, trusted=False, run=s_first_run_80),
    Session("big-160", 48, 160, run=s_big_160),
    Session("mid-120", 36, 120, trusted=False, run=s_mid_120),
    Session("signin-80", 24, 80, provider=False, run=s_signin),
    Session("signin-160", 48, 160, provider=False, run=s_signin),
    Session("upgrade-100", 30, 100, model="gpt-5.5", upgrade=True, run=s_upgrade),
    Session("plan-80", 24, 80, run=s_plan_question, since=PLAN_MODE_SINCE,
            why_not="no Plan mode / request_user_input question picker"),
    Session("plan-160", 48, 160, run=s_plan_question, since=PLAN_MODE_SINCE,
            why_not="no Plan mode / request_user_input question picker"),
    Session("signin-100", 30, 100, provider=False, run=s_signin_paths),
    Session("tools-80", 24, 80, run=s_tools_80),
    Session("errors-80", 24, 80, run=s_errors, retries=5),
    Session("errors-120", 36, 120, run=s_errors, retries=5),
    Session("mcp-80", 24, 80, run=s_mcp, mcp=True),
    Session("mcp-160", 48, 160, run=s_mcp, mcp=True),
    Session("trust-60", 20, 60, trusted=False, run=s_trust_narrow),
    Session("trust-44", 16, 44, trusted=False, run=s_trust_narrow),
    Session("inline-80", 24, 80, run=s_inline, args=("--no-alt-screen",)),
    Session("inline-120", 36, 120, run=s_inline, args=("--no-alt-screen",)),
]


# ----------------------------------------------------------------------------------------------
def make_home(sess: Session, home: Path, proj: Path, port: int) -> None:
    home.mkdir(parents=True)
    proj.mkdir(parents=True)
    (proj / "main.py").write_text("def main():\n    for i in range(10 - 1):\n        print(i)\n")
    (proj / "README.md").write_text("# demo\n")
    subprocess.run(["git", "init", "-q"], cwd=proj, check=True)
    lines = []
    model = by_release(UPGRADE_MODEL) if sess.upgrade else sess.model
    if sess.provider:
        lines += [f'model = "{model}"', 'model_provider = "mock"']
    if sess.trusted or not older_than(TRUST_WITHOUT_POLICY_UNTIL):
        lines += ['approval_policy = "on-request"', 'sandbox_mode = "read-only"']
    lines += ["check_for_update_on_startup = false", ""]
    if sess.provider:
        lines += ["[model_providers.mock]", 'name = "Mock"',
                  f'base_url = "http://127.0.0.1:{port}/v1"', 'wire_api = "responses"',
                  'env_key = "MOCK_API_KEY"']
        if sess.retries is not None:  # error sessions: give up after a few retries
            lines += [f"request_max_retries = {sess.retries}",
                      f"stream_max_retries = {sess.retries}"]
        lines += [""]
    if sess.trusted:
        lines += [f'[projects."{proj}"]', 'trust_level = "trusted"', ""]
    lines += ["[analytics]", "enabled = false", ""]
    (home / "config.toml").write_text("\n".join(lines))


def run_session(sess: Session, mock: Mock, only: str | None, index: dict) -> list[str]:
    tag = common.stamp(sess)
    base = AGENTS / f"codex-run-{tag}"
    home = AGENTS / f"codex-home-{tag}"
    proj = base / "proj"
    make_home(sess, home, proj, mock.port)
    env = {"CODEX_HOME": str(home), **common.tmux_env()}
    if sess.provider:
        env["MOCK_API_KEY"] = "sk-mock-not-a-real-key"
    def ctx(rec):
        c = Ctx(sess, rec, only, index)
        c.mock_log = mock.log
        return c
    cmd = [str(CODEX_BIN), *sess.args]
    if sess.mcp:  # a per-launch MCP server (a -c override: Codex then runs embedded, no daemon)
        stub = Path(__file__).resolve().parent / "mcp_stub.py"
        cmd += ["-c", f'mcp_servers.stub={{command="{sys.executable}",args=["{stub}"]}}']
    return common.run_session(sess, ctx, sess.run, base=base,
                              home=home, cmd=cmd, env=env, cwd=proj)


def capture(only: str | None) -> None:
    sessions = []
    for s in SESSIONS:
        if older_than(s.since):
            print(f"-- skip {s.name}: {VERSION} is older than {s.since} ({s.why_not})", flush=True)
        else:
            sessions.append(s)
    common.capture(only, agent="codex", sessions=sessions, out=OUT, bin_=CODEX_BIN, install=install,
                   start_mock=Mock, run=run_session,
                   title="# Real OpenAI Codex CLI captures; written by harness/codex.py (do not edit by hand).")


def main() -> None:
    common.main(__doc__, install=install, capture=capture, sessions=SESSIONS, configure=configure,
                describe=lambda s: f"{s.name:14s} {s.cols}x{s.rows} trusted={s.trusted} "
                                   f"provider={s.provider} model={s.model}")


if __name__ == "__main__":
    main()