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
from common import AGENTS, REPO, ByRelease, Idle, Prompt, Shot, Sleep, WaitText, Working, send, turn, kill_pids, pids_naming  # noqa: E402,F401,E501

# the release the rules were derived from (fixtures/codex/)
CODEX = common.NpmRelease("codex", "@openai/codex", "codex", pinned="0.171.0")
older_than = CODEX.older_than
by_release = CODEX.pick
# the pinned release's paths by their old names (tests/test_real_agents.py, scripts/)
CODEX_BIN, VERSION, PREFIX, PINNED = CODEX.bin, CODEX.version, CODEX.prefix, CODEX.pinned
install = CODEX.install
MODEL = "gpt-5-mock"         # unknown to Codex: plain function tools (exec_command), no GPT-6 code mode
BRAILLE = re.compile(r"[\u2800-\u28ff]")
OSC_RE = re.compile(rb"\x1b\](\d+);(.*?)(?:\x07|\x1b\\)", re.S)


# -- what differs by release (each seen on real captures; NOTES-codex.md has the details) --------
# A "since" release is the oldest release we captured that has the thing, not when it appeared.
# (A newest-first [(release, value), ...] table is read with by_release = CODEX.pick.)
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
    project: str = "proj"


class Ctx(common.TitleCtx):
    """What a session's script gets: the recording plus snapshot / wait helpers."""

    release = CODEX
    settle = 0.5
    columns = (45, 28, 7)

    mock_log: Path | None = None  # the mock's request log (else the Driver's mock's)

    @property
    def osc(self) -> bool:
        """Does this release write OSC 7501 state reports?"""
        return not older_than(OSC7501_SINCE)

    def footer(self, s: str) -> bool:
        return any(f in s for f in IDLE_FOOTERS) or (older_than(CODEX.pinned) and (
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
        if CODEX.version == CODEX.pinned:
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
        log = self.mock_log or (self.mock.log if self.mock else None)
        for line in (log.read_text().splitlines() if log else []):
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
        if CODEX.version == CODEX.pinned:
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
# scenario steps of Codex's own

def ready(c: Ctx) -> None:
    c.wait_ready()


def working_title(c: Ctx) -> None:
    c.wait_working_title()


def choose_no(c: Ctx) -> None:
    c.choose_no()


def trust(how) -> Callable:
    return lambda c: c.trust(common._text(how, c))


def stream_how(how: str):
    return lambda c: c.stream_how(how)


RUN_Q = "Would you like to run the following command"
EDIT_Q = "Would you like to make the following edits"


def stream_interrupt(c: Ctx) -> None:
    """The release's key that interrupts a streaming reply (STREAM_INTERRUPT_KEY)."""
    key = by_release(STREAM_INTERRUPT_KEY)
    c.rec.send(key)
    if key != "Escape":
        c.wait_text("Conversation interrupted")


# ----------------------------------------------------------------------------------------------
# session scripts

FIRST_RUN_80 = [  # 80x24, untrusted git folder: trust dialog, then a full tour of the basic states
    trust("first run in a git folder not yet in config: Codex asks to trust it"),
    ready,
    Shot("idle-start", "start",
         lambda c: "trusted the folder with Enter; empty composer" if not by_release(TRUST_ANSWER) else
         f"answered the trust dialog '{by_release(TRUST_ANSWER)}…'; empty composer"),
    Prompt("could you run `mkdir -p dist && cp main.py dist/` for me", wait=RUN_Q),
    Shot("blocked-command", "command-approval",
         "mock calls exec_command with sandbox_permissions=require_escalated; approval dialog up"),
    send("y"),
    WaitText("You approved"),
    Idle("idle-after-command", "after-approved-command",
         "approved the command with y; it ran and the mock sent a short final reply"),
    Prompt("please add a slugify helper to utils/strings.py", wait=EDIT_Q),
    Shot("blocked-edit", "edit-approval",
         "mock calls apply_patch (via exec_command) adding a file under the read-only sandbox"),
    send("Escape"),
    Idle("idle-after-reject-esc", "after-reject", "rejected the edit approval with Esc; turn ended, composer back"),
    turn("there is an off-by-one bug in main.py, can you fix it", "idle-question", "reply-question",
         "ordinary reply ending with 'Would you like me to add a regression test?'", wait="regression test?"),
    Prompt(lambda c: slow("walk me through the startup code slowly")),
    working_title,
    WaitText("careful walk-through"),
    Working("working-streaming", "streaming",
            stream_how("slow streamed reply (deltas over ~28 s); no working row, title spinner only"), wait=False),
    Sleep(4),
    stream_interrupt,
    Idle("idle-after-interrupt-stream", "after-interrupt",
         lambda c: "pressed Esc while the reply was streaming; turn interrupted"
         if by_release(STREAM_INTERRUPT_KEY) == "Escape" else
         f"pressed {by_release(STREAM_INTERRUPT_KEY)} while the reply was streaming (Esc does nothing then); "
         "turn interrupted"),
]

BIG_160 = [  # 160x48, pre-trusted: waiting for the first token, a long tool run, reject by 'no'
    ready,
    Shot("idle-start", "start", "pre-trusted folder; fresh start, empty composer"),
    Prompt("take your time and think about the cache invalidation design", wait="esc to interrupt"),
    Working("working-before-first-token", "waiting-first-token",
            "mock holds the response (keep-alives only) before the first token; Working row up",
            delay=2, wait=False),
    Working("working-before-first-token-late", "waiting-first-token",
            "same wait, 8 s in (timer and spinner advanced)", delay=6, wait=False),
    send("Escape"),
    Idle("idle-after-interrupt-waiting", "after-interrupt", "pressed Esc while waiting for the first token"),
    Prompt("please run `sleep 20 && echo integration suite finished` now", wait=RUN_Q),
    Shot("blocked-command-long", "command-approval",
         "escalated exec_command approval for a long command (160 columns)"),
    send("Enter"),
    WaitText("You approved"),
    WaitText("esc to interrupt", timeout=20),
    Working("working-tool-running", "tool-running",
            "approved with Enter; `sleep 20 && echo ...` running, Working row up", wait=False),
    Working("working-tool-running-late", "tool-running", "same command 8 s into its run", delay=5, wait=False),
    Idle("idle-after-command", "after-approved-command",
         "the long command finished; mock sent the final text", timeout=60),
    Prompt("create docs/CHANGELOG.md with a release entry", wait=EDIT_Q),
    Shot("blocked-edit", "edit-approval",
         "apply_patch adding docs/CHANGELOG.md under the read-only sandbox (160 columns)"),
    choose_no,   # "No, and tell Codex what to do differently" with the arrow keys
    Idle("idle-after-reject-no", "after-reject",
         "rejected the edit by choosing the 'No, and tell Codex…' option with arrows + Enter"),
    Prompt(lambda c: slow("explain in detail how the retry loop in main.py behaves")),
    working_title,
    WaitText("careful walk-through"),
    Working("working-streaming", "streaming",
            stream_how("slow streamed reply, 6 s after the first delta; no working row, title spinner only"),
            delay=6, wait=False),
    Idle("idle-after-stream", "after-reply", "the slow reply finished streaming", timeout=60),
]

MID_120 = [  # 120x36 untrusted: trust, then question + command reject via no
    trust("first run in an untrusted git folder (120 columns)"),
    ready,
    turn("the date parser has a bug with leap years, please fix it", "idle-question", "reply-question",
         "reply ending in a question, in a fresh session (120 columns)", wait="regression test?"),
    Prompt("now run `git status --short > status.txt` and show me", wait=RUN_Q),
    Shot("blocked-command", "command-approval", "escalated command approval after an earlier question reply"),
    choose_no,
    Idle("idle-after-reject-no", "after-reject",
         "rejected the command by choosing option 3 ('No, …') with arrows + Enter"),
    Prompt("write a small test in tests/test_dates.py", wait=EDIT_Q),
    Shot("blocked-edit", "edit-approval", "edit approval (120 columns)"),
    send("Escape"),
    Idle(),
    Prompt("please think through whether the API needs pagination", wait="esc to interrupt"),
    Working("working-before-first-token", "waiting-first-token",
            "Working row while the mock delays the first token (120 columns)", delay=1, wait=False),
    send("Escape"),
    Idle(),
]


def signin_screen(c: Ctx) -> None:
    c.wait(lambda s, t: "Sign in" in s or "sign in" in s or "API key" in s, "sign-in screen", 30)


SIGNIN = [  # no provider configured and no credentials: the sign-in screen
    signin_screen,
    Sleep(1),
    Shot("blocked-sign-in", "sign-in",
         "no provider and no credentials in CODEX_HOME: Codex shows its sign-in screen"),
]


def s_upgrade(c: Ctx) -> None:
    """A known model with an upgrade path: the model-migration dialog on start."""
    if CODEX.version == CODEX.pinned:
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



PLAN_QUESTION = [  # Plan mode (Shift+Tab): the model's request_user_input question dialog
    ready,
    send("BTab"),
    WaitText("Plan mode", settle=0.6),
    Shot("idle-plan-mode", "start", "switched to Plan mode with Shift+Tab; idle composer"),
    Prompt(lambda c: "before changing the logger, ask me which option you should use" if c.s.cols < 120
           else "let me choose between two designs for the cache layer first", wait="enter to submit answer"),
    Shot("blocked-question", "question",
         "Plan mode: mock calls request_user_input; Codex's question picker (footer still says "
         "'esc to interrupt')"),
    send("Enter"),
    Idle("idle-after-question-answered", "after-reply",
         "answered the question with Enter; mock replied with short final text"),
]


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


TOOLS_80 = [  # 80x24 again, other commands: a sandboxed tool run interrupted, a wrapped long command
    ready,
    Prompt("in the sandbox, run `sleep 15; ls -la src` to check the layout", wait="esc to interrupt"),
    Working("working-tool-sandboxed", "tool-running",
            "non-escalated exec_command (sleep) running inside the read-only sandbox, no approval", wait=False),
    send("Escape"),
    Idle("idle-after-interrupt-tool", "after-interrupt", "pressed Esc while the sandboxed command was running"),
    Prompt("execute `sleep 12 && find . -name '*.py' -newer README.md -print > changed-files.txt` thanks",
           wait=RUN_Q),
    Shot("blocked-command-wrapped", "command-approval", "escalated approval for a long command that wraps at 80 columns"),
    send("Enter"),
    WaitText("You approved"),
    WaitText("esc to interrupt", timeout=20),
    Working("working-tool-running", "tool-running", "approved with Enter; the 12 s command is running",
            delay=4, wait=False),
    Idle("idle-after-command-long", "after-approved-command",
         "the approved long command finished; final text shown", timeout=60),
    Prompt(lambda c: slow("could you explain in detail what changed-files.txt will contain")),
    working_title,
    WaitText("careful walk-through"),
    Working("working-streaming-late", "streaming",
            stream_how("slow reply ~12 s into streaming (text fills the screen); no working row"),
            delay=12, wait=False),
    Idle("idle-after-stream", "after-reply", "the slow reply finished", timeout=60),
]


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


MCP = [  # an MCP server (harness/mcp_stub.py, -c mcp_servers.stub=…) whose destructive tool the mock calls
    ready,
    Prompt("please use the mcp tool deploy_preview for this branch"),
    WaitText("enter to submit", timeout=60),
    Shot("blocked-mcp-approval", "mcp-approval",
         "mock calls mcp__stub__deploy_preview (destructive, open-world MCP tool): Codex's "
         "approval form ('Field 1/1', 'enter to submit | esc to cancel')"),
    send("Escape"),
    Idle("idle-after-mcp-cancel", "after-reject", "cancelled the MCP approval form with Esc; turn ended, composer back"),
]


def s_trust_narrow(c: Ctx) -> None:
    """A narrow pane, untrusted folder: the trust question wraps over several rows."""
    c.trust(f"first run in an untrusted git folder on a narrow pane ({c.s.cols} columns): the "
            "question wraps over several rows")
    # a narrow composer drops its '? for shortcuts' footer: wait for the composer itself
    c.wait(lambda s, t: "Ask Codex" in s or (c.osc and any(
        x.startswith("state=idle") for x in c.osc_states())), "composer", 60)
    c.rec.settle(1.5, timeout=15)
    c.shot("idle-start", "idle", "start", "answered the trust question; empty composer (narrow)")


INLINE = [
    # --no-alt-screen (inline: history goes to the terminal's scrollback): turns with a tool run
    # and a working row, then the finished turn ('Worked for …' divider) must read idle
    ready,
    Shot("idle-start-inline", "start", "--no-alt-screen; fresh start, empty composer"),
    Prompt("in the sandbox, run `sleep 6; ls -la` to check the layout", wait="esc to interrupt"),
    Working("working-tool-sandboxed-inline", "tool-running",
            "--no-alt-screen: sandboxed command running, Working row up", wait=False),
    Idle("idle-after-command-inline", "after-approved-command",
         "--no-alt-screen: the command finished, final text and 'Worked for …' shown", timeout=60),
    Prompt(lambda c: slow("walk me through the startup code slowly")),
    working_title,
    Idle("idle-after-stream-inline", "after-reply", "--no-alt-screen: the slow reply finished", timeout=60),
]


SESSIONS = [
    Session("first-run-80", 24, 80, trusted=False, run=FIRST_RUN_80),
    Session("big-160", 48, 160, run=BIG_160),
    Session("mid-120", 36, 120, trusted=False, run=MID_120),
    Session("signin-80", 24, 80, provider=False, run=SIGNIN),
    Session("signin-160", 48, 160, provider=False, run=SIGNIN),
    Session("upgrade-100", 30, 100, model="gpt-5.5", upgrade=True, run=s_upgrade),
    Session("plan-80", 24, 80, run=PLAN_QUESTION, since=PLAN_MODE_SINCE,
            why_not="no Plan mode / request_user_input question picker"),
    Session("plan-160", 48, 160, run=PLAN_QUESTION, since=PLAN_MODE_SINCE,
            why_not="no Plan mode / request_user_input question picker"),
    Session("signin-100", 30, 100, provider=False, run=s_signin_paths),
    Session("tools-80", 24, 80, run=TOOLS_80),
    Session("errors-80", 24, 80, run=s_errors, retries=5),
    Session("errors-120", 36, 120, run=s_errors, retries=5),
    Session("mcp-80", 24, 80, run=MCP, mcp=True),
    Session("mcp-160", 48, 160, run=MCP, mcp=True),
    Session("trust-60", 20, 60, trusted=False, run=s_trust_narrow),
    Session("trust-44", 16, 44, trusted=False, run=s_trust_narrow),
    Session("inline-80", 24, 80, run=INLINE, args=("--no-alt-screen",)),
    Session("inline-120", 36, 120, run=INLINE, args=("--no-alt-screen",)),
]


def plan(sessions: list[Session]) -> list[Session]:
    """The sessions the release driven can run (`since`)."""
    out = []
    for s in sessions:
        if older_than(s.since):
            print(f"-- skip {s.name}: {CODEX.version} is older than {s.since} ({s.why_not})", flush=True)
        else:
            out.append(s)
    return out


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


def cmd(sess: Session, proj: Path) -> list[str]:
    c = [str(CODEX.bin), *sess.args]
    if sess.mcp:  # a per-launch MCP server (a -c override: Codex then runs embedded, no daemon)
        stub = Path(__file__).resolve().parent / "mcp_stub.py"
        c += ["-c", f'mcp_servers.stub={{command="{sys.executable}",args=["{stub}"]}}']
    return c


def env(sess: Session, home: Path, proj: Path, mock: common.Mock) -> dict:
    return {"CODEX_HOME": str(home), **({"MOCK_API_KEY": "sk-mock-not-a-real-key"} if sess.provider else {})}


class Driver(common.Driver):
    def dirs(self, sess: Session) -> tuple[Path, Path, Path]:
        tag = common.stamp(sess)
        return AGENTS / f"codex-run-{tag}", AGENTS / f"codex-home-{tag}", AGENTS / f"codex-run-{tag}" / "proj"


DRIVER = Driver(
    CODEX, "OpenAI Codex CLI", __doc__, Ctx, SESSIONS, Mock, env=env, cmd=cmd, plan=plan,
    setup=lambda d, sess, home, proj, mock: make_home(sess, home, proj, mock.port),
    describe=lambda s: f"{s.name:14s} {s.cols}x{s.rows} trusted={s.trusted} provider={s.provider} model={s.model}")

if __name__ == "__main__":
    DRIVER.main()
