"""Capture real Claude Code fixtures against the scripted mock model server.

    python harness/claude.py install              # npm install the pinned CLI under /work/agents
    python harness/claude.py capture [--only S]   # run the capture sessions, write fixtures/claude
    python harness/claude.py list                 # list the sessions
    python harness/claude.py capture --out DIR --only b1 --size 22x70 --renderer classic
                                                  # held-out re-run in another shape, elsewhere

Every session runs the real CLI in a private tmux server (harness/tmuxrec.py), with a throwaway
HOME under /work/agents, the env pointing it at harness/mock_anthropic.py, and drives it with
keys. Each fixture is the full byte prefix from the agent's first byte up to the moment tmux's
own screen shows the wanted state; `<name>.screen.txt` is tmux's rendering at that moment.
`fixtures/claude/index.toml` lists them (re-running with --only keeps the other sessions'
entries).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import AGENTS  # noqa: E402
from tmuxrec import Recording  # noqa: E402



class ClaudeRelease(common.NpmRelease):
    """Claude Code at one release. Another release than the pinned one keeps its sessions'
    throwaway dirs and the mock's request log in its prefix's `runs/`."""

    def configure(self, version: str | None, out: Path | None) -> None:
        super().configure(version, out)
        self.runs = AGENTS if self.version == self.pinned else self.prefix / "runs"
        self.mock_log = (AGENTS / "claude-mock-requests.jsonl" if self.version == self.pinned
                         else self.runs / "mock-requests.jsonl")


CLAUDE = ClaudeRelease("claude", "@anthropic-ai/claude-code", "claude", pinned="2.1.332")
# the release driven, by the names the code below (and tests/, scripts/) read; configure() moves them
PINNED, VERSION, PREFIX, BIN, OUT = CLAUDE.pinned, CLAUDE.version, CLAUDE.prefix, CLAUDE.bin, CLAUDE.out
RUNS = CLAUDE.runs     # where the throwaway HOME / project / recording dirs of a session go
MOCK_LOG = CLAUDE.mock_log
KEY = "sk-ant-api03-mock-0123456789abcdefghijKLMNOPQRSTuvwx"

# screen needles (plain substrings of tmux's capture-pane)
WORKING = "esc to interrupt"
DLG_BASH = "Do you want to proceed?"
DLG_CREATE = "Do you want to create"
DLG_EDIT = "Do you want to make this edit"
DLG_ASK = "Enter to select"
DLG_PLAN = "ready to execute"
DLG_TRUST = "Yes, I trust this folder"
DLG_KEY = "Do you want to use this API key?"
DLG_THEME = "Choose the text style"
DLG_NOTES = "Press Enter to continue"
PROMPT = "❯"                      # the input box's prompt glyph
IDLE_FOOTERS = ("? for shortcuts", "(shift+tab to cycle)")
MODE_FLAG = "manual"              # --permission-mode that asks before every write
DEFAULT_MODE = "manual mode on"   # its footer (None: the default mode shows no mode text)
RETRYING = "retrying in"          # the spinner row while a 529 is retried
STREAMING = "Here is a walk"      # on screen while the mock's long reply streams
READ_DLG = "Esc to cancel"        # with DLG_BASH: the Read-outside-the-project dialog is up
ENTER_PAUSE = 0.4                 # between the last typed character and Enter
ENTER_RETRY = False               # press Enter again while the prompt is still in the box
STALE_WORKING_ROW = False         # a finished turn can leave its working footer row on screen
FULLSCREEN_OPT_IN = False         # the fullscreen renderer is not the default: ask for it
FULLSCREEN = True                 # the release has the fullscreen renderer (`tui` setting)
UNSUPPORTED: dict[str, str] = {}  # scenario -> why it cannot run on this release
PROJECT_KEYS: dict = {}           # more keys a trusted project's entry in ~/.claude.json needs

LOCK = threading.Lock()


# -- other releases (--version) -------------------------------------------------------------------
def ready_home(home: Path, proj: Path, mock_port: int, path: str) -> dict[str, str]:
    """A throwaway HOME like the "ready" sessions' (onboarded, key approved, project trusted)
    and the environment pointing the CLI at the mock on `mock_port` (tests and benchmarks)."""
    home.mkdir()
    proj.mkdir()
    (proj / "README.md").write_text("# demo\n")
    (home / ".claude.json").write_text(json.dumps({
        "hasCompletedOnboarding": True, "theme": "dark",
        "customApiKeyResponses": {"approved": [KEY[-20:]], "rejected": []},
        "projects": {str(proj): {"hasTrustDialogAccepted": True}}}))
    return {"HOME": str(home), "PATH": path, "TERM": "xterm-256color", "LANG": "C.UTF-8",
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{mock_port}", "ANTHROPIC_API_KEY": KEY,
            "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "CLAUDE_CODE_MAX_RETRIES": "1"}  # a turn the mock fails ends in seconds


def older_than(v: str) -> bool:
    """The release being captured is older than `v`."""
    return CLAUDE.older_than(v)


def configure(version: str | None, out: Path | None) -> None:
    """Point the driver at another release than the pinned one (`--version`): its install
    prefix `/work/agents/claude-<V>`, whose `runs/` then also holds the sessions' throwaway
    dirs and the mock's request log, and its fixtures in `fixtures/claude/<V>/`
    (`common.release_out`); `--out DIR` writes the fixtures elsewhere. With neither, or with
    the pinned version, every path stays what it was. The release's screens: UI (below)."""
    global VERSION, PREFIX, BIN, OUT, RUNS, MOCK_LOG
    CLAUDE.configure(version, Path(out) if out else None)
    VERSION, PREFIX, BIN, OUT = CLAUDE.version, CLAUDE.prefix, CLAUDE.bin, CLAUDE.out
    RUNS, MOCK_LOG = CLAUDE.runs, CLAUDE.mock_log
    if CLAUDE.version != CLAUDE.pinned:
        RUNS.mkdir(parents=True, exist_ok=True)
    globals().update(CLAUDE.pick(UI))


def log(msg: str) -> None:
    with LOCK:
        print(time.strftime("%H:%M:%S"), msg, flush=True)


# -- install ------------------------------------------------------------------------------------
def install() -> int:
    PREFIX.mkdir(parents=True, exist_ok=True)
    if not BIN.exists():
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", str(PREFIX),
                        f"@anthropic-ai/claude-code@{VERSION}"], check=True)
    out = subprocess.run([str(BIN), "--version"], capture_output=True, text=True,
                         env={**os.environ, "HOME": str(RUNS / "home-version")})
    print(out.stdout.strip() or out.stderr.strip())
    return 0 if VERSION in out.stdout else 1


# -- the mock -----------------------------------------------------------------------------------
class Mock(common.Mock):
    def __init__(self, logfile: Path):
        super().__init__("mock_anthropic.py", logfile, port_option=True)


# -- one session --------------------------------------------------------------------------------
class Session:
    """One run of the CLI in one pane; `snap` saves the byte prefix as a fixture."""

    def __init__(self, tag: str, renderer: str, rows: int, cols: int, config: str,
                 mock: Mock, entries: list[dict], seed: dict[str, str] | None = None,
                 extra_env: dict[str, str] | None = None, no_mux: bool = False,
                 settings: dict | None = None):
        self.tag, self.renderer, self.rows, self.cols = tag, renderer, rows, cols
        self.entries = entries
        stamp = f"{tag}-{os.getpid()}"
        self.home = RUNS / f"home-claude-{stamp}"
        self.proj = RUNS / f"proj-claude-{stamp}" / "project"
        for d in (self.home, self.proj.parent):
            shutil.rmtree(d, ignore_errors=True)
        self.home.mkdir(parents=True)
        self.proj.mkdir(parents=True)
        for rel, text in (seed or {}).items():
            p = self.proj / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
        cfg: dict = {}
        if config in ("ready", "untrusted", "key-unapproved"):
            cfg.update(hasCompletedOnboarding=True, theme="dark")
        if config in ("ready", "untrusted", "onboarding"):
            cfg["customApiKeyResponses"] = {"approved": [KEY[-20:]], "rejected": []}
        if config == "ready":
            cfg["projects"] = {str(self.proj): {"hasTrustDialogAccepted": True, **PROJECT_KEYS}}
        if cfg:
            (self.home / ".claude.json").write_text(json.dumps(cfg, indent=2))
        env = {"HOME": str(self.home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
               "TERM": "xterm-256color", "LANG": "C.UTF-8",
               "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{mock.port}", "ANTHROPIC_API_KEY": KEY,
               "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
               **(extra_env or {})}
        cmd = [str(BIN), "--permission-mode", MODE_FLAG]
        settings = dict(settings or {})
        if renderer == "classic" and FULLSCREEN:
            settings["tui"] = "default"
        elif renderer == "fullscreen" and FULLSCREEN_OPT_IN:
            settings["tui"] = "fullscreen"
        if settings:
            cmd += ["--settings", json.dumps(settings, separators=(",", ":"))]
        if no_mux:  # as over ssh from inside tmux: the CLI sees no multiplexer (TMUX, STY, ZELLIJ)
            cmd = ["env", "-u", "TMUX", "-u", "TMUX_PANE", "-u", "STY", "-u", "ZELLIJ", *cmd]
        self.cmd = cmd
        self.rec = Recording(RUNS / f"rec-claude-{stamp}", cmd, rows=rows, cols=cols, env=env,
                             cwd=self.proj, socket_name=f"agentstate-claude-{stamp}")
        log(f"[{tag}] started {renderer} {cols}x{rows} config={config}")

    # waiting ------------------------------------------------------------------------------------
    def wait(self, *needles: str, timeout: float = 60.0, absent: tuple[str, ...] = ()) -> str:
        """Wait until every needle is on tmux's screen and none of `absent` is."""
        deadline = time.time() + timeout
        while True:
            scr = self.rec.screen()
            if all(n in scr for n in needles) and not any(a in scr for a in absent):
                return scr
            if time.time() > deadline:
                raise TimeoutError(f"[{self.tag}] waiting for {needles} (absent {absent}); "
                                   f"screen:\n{scr}")
            time.sleep(0.1)

    def wait_any(self, *needles: str, timeout: float = 60.0) -> str:
        deadline = time.time() + timeout
        while True:
            scr = self.rec.screen()
            for n in needles:
                if n in scr:
                    return n
            if time.time() > deadline:
                raise TimeoutError(f"[{self.tag}] waiting for any of {needles}; screen:\n{scr}")
            time.sleep(0.1)

    def wait_idle(self, timeout: float = 90.0) -> str:
        """The input box and its idle footer are back, nothing runs, and it stays so for 1 s
        (a dialog replaces the footer; a running turn shows "esc to interrupt")."""
        deadline = time.time() + timeout
        while True:
            if STALE_WORKING_ROW:
                scr = self.rec.screen()
                if PROMPT not in scr or self.busy(scr):
                    if time.time() > deadline:
                        raise TimeoutError(f"[{self.tag}] never idle; screen:\n{scr}")
                    time.sleep(0.1)
                    continue
            else:
                scr = self.wait(PROMPT, timeout=max(1.0, deadline - time.time()),
                                absent=(WORKING,))
            tail = "\n".join(l for l in scr.splitlines() if l.strip())[-400:]
            if any(f in tail for f in IDLE_FOOTERS):
                time.sleep(1.0)
                again = self.rec.screen()
                tail2 = "\n".join(l for l in again.splitlines() if l.strip())[-400:]
                if not self.busy(again) and any(f in tail2 for f in IDLE_FOOTERS):
                    return again
            if time.time() > deadline:
                raise TimeoutError(f"[{self.tag}] never idle; screen:\n{scr}")
            time.sleep(0.1)

    def busy(self, scr: str) -> bool:
        """A turn runs: "esc to interrupt" on screen; with STALE_WORKING_ROW only below the
        input row (2.1.220 can leave a stale working footer row above the box)."""
        if not STALE_WORKING_ROW:
            return WORKING in scr
        rows = scr.splitlines()
        last = max((i for i, l in enumerate(rows) if l.startswith(PROMPT)), default=-1)
        return any(WORKING in l for l in rows[last + 1:]) if last >= 0 else WORKING in scr

    def prompt(self, text: str) -> None:
        # a character at a time (tmuxrec.type sends ";", a tmux command separator, escaped)
        self.rec.type(text, enter=False, delay=0.01)
        time.sleep(ENTER_PAUSE)
        self.rec.send("Enter")
        if ENTER_RETRY:  # older releases: Enter again while the text is still in the box
            for _ in range(2):
                time.sleep(2.5)
                if text[:24] not in self.input_box():
                    break
                log(f"[{self.tag}] the prompt is still in the input box: Enter again")
                self.rec.send("Enter")

    def input_box(self) -> str:
        """The rows between the last two full-width rules (the input box of releases < 2.1)."""
        rows = self.rec.screen().splitlines()
        rules = [i for i, l in enumerate(rows) if l.strip() and set(l.strip()) == {"─"}]
        if len(rules) < 2:
            return ""
        return "\n".join(rows[rules[-2] + 1:rules[-1]])

    def session_status(self) -> str:
        d = self.home / ".claude" / "sessions"
        for f in sorted(d.glob("*.json")) if d.exists() else []:
            try:
                j = json.loads(f.read_text())
            except ValueError:
                continue
            if "status" in j:
                return j["status"] + (f"/{j['waitingFor']}" if j.get("waitingFor") else "")
        return "-"

    # snapshots ----------------------------------------------------------------------------------
    def snap(self, state: str, kind: str, how: str, *, settle: float | None = 0.6,
             mark: str | None = None, need: str | None = WORKING) -> str:
        base = f"{self.renderer}-{self.cols}x{self.rows}-{self.tag}-{state}-{kind}"
        name, n = base, 1
        while any(e["file"] == name + ".raw" for e in self.entries):
            n += 1
            name = f"{base}-{n}"
        if settle:
            self.rec.settle(settle)
        # the screen must not change while the bytes are copied (a blinking tool dot or the
        # spinner would make the saved tmux screen a frame off the saved bytes): retry until the
        # screen before and after the copy agree
        dest = OUT / f"{name}.raw"
        for attempt in range(80):
            before = self.rec.screen()
            time.sleep(0.15 if attempt < 3 else 0.03)  # let `cat` flush what tmux handed it
            shutil.copyfile(self.rec.raw, dest)
            after = self.rec.screen()
            if before == after:
                break
            time.sleep(0.01)
        else:
            log(f"[{self.tag}] {name}: screen kept changing during the copy")
        facts = {"bytes": dest.stat().st_size, "tmux_screen": after}
        if state == "working" and need and need not in after:
            # the truth comes from the screen: a turn that ended before the copy is no
            # "working" capture (never seen on 2.1.332; 2.0.77 shows a reply only once done)
            dest.unlink()
            raise RuntimeError(f"[{self.tag}] {name}: '{WORKING}' gone from the screen before "
                               f"the snapshot:\n{after}")
        (OUT / f"{name}.screen.txt").write_text(facts["tmux_screen"])
        status = self.session_status()
        with LOCK:
            self.entries.append({
                "file": f"{name}.raw", "state": state, "kind": kind, "agent": "claude",
                "agent_version": VERSION, "size": f"{self.rows}x{self.cols}",
                "renderer": self.renderer,
                "how": f"{how} (session {self.tag}; sessions/<pid>.json status: {status})",
                **({"mark": mark} if mark else {})})
        log(f"[{self.tag}] {name}.raw {facts['bytes']} bytes, session status {status}")
        return name

    def close(self) -> None:
        self.rec.close()


# -- scenario building blocks -------------------------------------------------------------------
def in_default_mode(scr: str) -> bool:
    if DEFAULT_MODE:
        return DEFAULT_MODE in scr
    tail = "\n".join(l for l in scr.splitlines() if l.strip()).splitlines()[-3:]
    return any("? for shortcuts" in l for l in tail) and not any(" on (shift+tab" in l or
                                                                  "mode on" in l for l in tail)


def back_to_default_mode(s: Session) -> None:
    """Shift+Tab until the footer shows the default permission mode again."""
    for _ in range(4):
        if in_default_mode(s.rec.screen()):
            break
        s.rec.send("BTab")
        time.sleep(0.8)
    if DEFAULT_MODE:
        s.wait(DEFAULT_MODE, timeout=5)
    elif not in_default_mode(s.rec.screen()):
        raise TimeoutError(f"[{s.tag}] never back in the default mode:\n{s.rec.screen()}")


def sc_start(s: Session, p: dict) -> None:
    s.wait(PROMPT, "? for shortcuts", timeout=60)
    s.snap("idle", "start", "fresh session, trusted folder, nothing typed yet")


def sc_first_token(s: Session, p: dict) -> None:
    s.prompt(f"{p['delay_prompt']} DELAYFIRST 22")
    s.wait(WORKING, timeout=30)
    time.sleep(3)
    s.snap("working", "before-first-token",
           "prompt sent, mock holds the reply 22 s: spinner up, no text yet", settle=None)
    s.wait_idle(timeout=60)


def sc_stream(s: Session, p: dict) -> None:
    s.prompt(f"{p['stream_prompt']} STREAMSLOW 22")
    s.wait(WORKING, STREAMING, timeout=30)
    time.sleep(p.get("stream_wait", 6))
    s.snap("working", "streaming", "mock streams a long reply in small deltas over 22 s; "
           "snapshot mid-stream", settle=None)
    s.wait_idle(timeout=60)
    s.snap("idle", "reply-done", "a long streamed reply has finished")


def sc_bash_approve(s: Session, p: dict) -> None:
    s.prompt(f"{p['bash_prompt']} RUNCMD {p['bash_cmd']}")
    s.wait(DLG_BASH, timeout=30)
    s.snap("blocked", "command-approval", "mock calls Bash with a writing command; the "
           "permission dialog is up")
    s.rec.send("Enter")
    s.wait_idle(timeout=60)
    s.snap("idle", "approved-done", "Bash prompt approved with Enter (1. Yes); the command ran "
           "and the final reply is shown")


def sc_long_tool(s: Session, p: dict) -> None:
    s.prompt(f"{p['long_prompt']} RUNCMD {p['long_cmd']}")
    try:
        s.wait(DLG_BASH, timeout=10)
    except TimeoutError:
        pass  # judged read-only: it runs without asking
    else:
        s.snap("blocked", "command-approval", "mock calls Bash with a long-running command; "
               "the permission dialog is up")
        s.rec.send("Enter")
    s.wait(WORKING, timeout=30, absent=(DLG_BASH,))
    time.sleep(p.get("tool_wait", 5))
    s.snap("working", "tool-running", "an approved long Bash command (a sleep) is running",
           settle=None)
    s.wait_idle(timeout=90)


def sc_write_reject(s: Session, p: dict) -> None:
    s.prompt(f"{p['write_prompt']} WRITEFILE {p['write_file']}")
    s.wait(DLG_CREATE, timeout=30)
    s.snap("blocked", "file-write-approval", "mock calls Write for a new file; the create-file "
           "dialog is up")
    s.rec.send("Escape")
    s.wait_idle(timeout=30)
    s.snap("idle", "rejected-esc", "the file dialog was rejected with Esc (Interrupted)")


def sc_edit_approve(s: Session, p: dict) -> None:
    path, old, new = p["edit"]
    s.prompt(f"{p['edit_prompt']} EDITFILE {path} {old} {new}")
    s.wait(DLG_EDIT, timeout=40)
    s.snap("blocked", "file-edit-approval", "mock calls Read then Edit; the edit dialog with "
           "its diff is up")
    s.rec.send("Enter")
    s.wait_idle(timeout=40)
    s.snap("idle", "approved-done", "the edit was approved with Enter and the turn finished")


def sc_bash_reject(s: Session, p: dict) -> None:
    s.prompt(f"{p['reject_prompt']} RUNCMD {p['reject_cmd']}")
    s.wait(DLG_BASH, timeout=30)
    s.snap("blocked", "command-approval", "mock calls Bash; the permission dialog is up")
    s.rec.send("Escape")
    s.wait_idle(timeout=30)
    s.snap("idle", "rejected-esc", "the Bash dialog was rejected with Esc")


def sc_ask(s: Session, p: dict) -> None:
    s.prompt(f"{p['ask_prompt']} ASKQUESTION")
    s.wait(DLG_ASK, timeout=30)
    s.snap("blocked", "ask-user-question", "mock calls AskUserQuestion; the question picker is up")
    if p.get("ask_answer", True):
        s.rec.send("Down")
        time.sleep(0.3)
        s.rec.send("Enter")
        s.wait_idle(timeout=30)
        s.snap("idle", "approved-done", "the question was answered (option 2) and the turn finished")
    else:
        s.rec.send("Escape")
        s.wait_idle(timeout=30)
        s.snap("idle", "rejected-esc", "the question picker was dismissed with Esc")


def sc_question_reply(s: Session, p: dict) -> None:
    s.prompt(f"{p['question_prompt']} ENDQUESTION")
    s.wait("regression test?", timeout=30)
    s.wait_idle(timeout=30)
    s.snap("idle", "reply-question", "the reply ends with an ordinary question "
           "(Would you like me to add a regression test?)")


def sc_interrupt(s: Session, p: dict) -> None:
    s.prompt(f"{p['interrupt_prompt']} STREAMSLOW 30")
    s.wait(WORKING, STREAMING, timeout=30)
    time.sleep(3)
    s.snap("working", "streaming", "a long reply is streaming (before Esc)", settle=None)
    s.rec.send("Escape")
    s.wait("Interrupted", timeout=20)
    s.wait_idle(timeout=20)
    s.snap("idle", "interrupted", "a streaming reply was interrupted with Esc")


def sc_plan(s: Session, p: dict) -> None:
    for _ in range(4):
        if "plan mode on" in s.rec.screen():
            break
        s.rec.send("BTab")
        time.sleep(0.8)
    s.wait("plan mode on", timeout=5)
    s.snap("idle", "plan-mode", "idle in plan mode (footer shows plan mode, no '? for shortcuts')")
    s.prompt(f"{p['plan_prompt']} PLANEXIT")
    s.wait(DLG_PLAN, timeout=40)
    s.snap("blocked", "plan-approval", "in plan mode the mock writes the plan file and calls "
           "ExitPlanMode; the plan approval dialog is up")
    s.rec.send("Escape")
    s.wait_idle(timeout=30)
    s.snap("idle", "rejected-esc", "the plan approval was dismissed with Esc (still in plan mode)")
    back_to_default_mode(s)  # plan -> auto -> manual


# The first-run screens of an older release, met in whatever order it shows them (FIRSTRUN_WALK):
# (needle, fixture kind, keys that accept it, what it is). Set per release from UI (configure).
FIRSTRUN_WALK: list[tuple[str, str, list[str], str]] = []


# -- what differs by release: the needles and switches above, per release (newest first; read with
# CLAUDE.pick by configure); each difference names the release it was seen in (NOTES-claude.md
# has the screens)
UI_KEYS = ("PROMPT", "MODE_FLAG", "DEFAULT_MODE", "RETRYING", "FULLSCREEN", "DLG_TRUST", "DLG_PLAN",
           "STREAMING", "READ_DLG", "ENTER_PAUSE", "ENTER_RETRY", "STALE_WORKING_ROW",
           "FULLSCREEN_OPT_IN", "FIRSTRUN_WALK", "PROJECT_KEYS", "UNSUPPORTED")
UI_PINNED = {k: globals()[k] for k in UI_KEYS}
UI_2_1 = {
    **UI_PINNED,
    # 2.1.220: the pinned release's screens, but the order of the first-run dialogs and of
    # their options is not assumed: walk them
    # 2.1.220 (fullscreen 60x20) left "⏸ manual mode on · esc to interrupt" as a stale row
    # above the input box after a turn ended, the real idle footer below the box
    "STALE_WORKING_ROW": True,
    # 2.1.220: "✻ API error · Retrying in 1s · attempt 1/10" (capital R)
    # 2.1.220: the classic renderer is the default; fullscreen is `tui: "fullscreen"`
    "FULLSCREEN_OPT_IN": True,
    "RETRYING": "Retrying in",
    "FIRSTRUN_WALK": [
        (DLG_THEME, "theme-picker", ["Down", "Enter"], "theme picker"),
        (DLG_KEY, "api-key-approval", ["choose:Yes"], "'Detected a custom API key' dialog (default No)"),
        (DLG_NOTES, "security-notes", ["Enter"], "security notes, waits for Enter"),
        (DLG_TRUST, "folder-trust", ["choose:Yes, "], "folder trust dialog"),
    ],
}
UI_2_0 = {
    **UI_PINNED,
    # 2.0.77, 1.0.128: the input box is a prompt row between two rules with "? for
    # shortcuts" under it; the modes are default / acceptEdits / plan / bypassPermissions ("default"
    # shows no mode text, the others "⏵⏵ accept edits on (shift+tab to cycle)"); one
    # renderer only (main screen, no `tui` setting); a 529 is retried with "Retrying in 1
    # second… (attempt 1/10)"; the plan dialog reads "Ready to code? … Here is Claude's
    # plan: … Would you like to proceed?" and the plan is ExitPlanMode's `plan` input.
    "MODE_FLAG": "default",
    "DEFAULT_MODE": None,
    "FULLSCREEN": False,
    "RETRYING": "Retrying in",
    # the trust dialog's title and "yes" label vary (an A/B test in 2.0.77: "Do you trust
    # the files in this folder?" / "Yes, proceed", "Ready to code here?" / "Yes,
    # continue", "Accessing workspace" / "Yes, I trust this folder"); "No, exit" is in
    # all, second, after the selected "yes"
    # 2.0.77 shows neither the reply text nor a token count while a reply streams (the
    # text appears at once when the block ends): the spinner row "✻ Mustering… (esc to
    # interrupt)" is all there is
    "STREAMING": WORKING,
    "DLG_TRUST": "No, exit",
    "DLG_PLAN": "Would you like to proceed?",
    # 1.0.128's permission dialogs have no footer (a "│ … │" box ending with "3. No, and
    # tell Claude what to do differently (esc)"); the Read one is titled "Read file"
    "READ_DLG": "Read file",
    # 1.0.128 took an Enter 0.4 s after the last typed character as part of a paste (a
    # newline in the box, nothing sent), mostly for a session's first prompt
    "ENTER_PAUSE": 1.2,
    "ENTER_RETRY": True,
    "FIRSTRUN_WALK": [
        ("Choose the text style", "theme-picker", ["Down", "Enter"], "theme picker"),
        ("Do you want to use this API key?", "api-key-approval", ["choose:Yes"],
         "'Detected a custom API key' dialog (default No)"),
        ("Press Enter to continue", "security-notes", ["Enter"], "security notes, waits for Enter"),
        ("No, exit", "folder-trust", ["choose:Yes, "], "folder trust dialog"),
    ],
}
UI_1 = {
    **UI_2_0,
    # 1.0.128: the prompt glyph is ">" (2.0.77 already has "❯")
    "PROMPT": ">",
    # 1.0.128 shows no reply text until the block ends: while it streams, only the spinner
    # row's token count ("✻ Cooking… (esc to interrupt · 9s · ↓ 326 tokens)") moves
    "STREAMING": " tokens)",
    # 1.0.128 dies at start ("TypeError: B.allowedTools is not iterable") when the
    # project's entry has no allowedTools list
    "PROJECT_KEYS": {"allowedTools": []},
    "UNSUPPORTED": {"ask": "no AskUserQuestion tool before 2.0 (1.0.128 sends none)",
                    "ask_multi": "no AskUserQuestion tool before 2.0 (1.0.128 sends none)"},
}
UI = [(CLAUDE.pinned, UI_PINNED), ("2.1.0", UI_2_1), ("2.0.0", UI_2_0), ("0.0.0", UI_1)]


def choose(s: Session, label: str) -> None:
    """Move the "❯" selection of the list on screen to the option containing `label`, then
    Enter (the order of a dialog's options differs between releases)."""
    for key in ("Down", "Up"):
        for _ in range(4):
            rows = s.rec.screen().splitlines()
            sel = [l for l in rows if "❯" in l and l.split("❯", 1)[1].strip()]
            if sel and label in sel[-1]:
                s.rec.send("Enter")
                time.sleep(0.5)
                return
            s.rec.send(key)
            time.sleep(0.4)
    raise TimeoutError(f"[{s.tag}] no option {label!r} to select:\n{s.rec.screen()}")


def walk_first_run(s: Session, what: str) -> None:
    """Older releases: snapshot each first-run screen FIRSTRUN_WALK knows as it comes up, accept
    it with its keys, until the REPL's input box and idle footer are up. In the classic renderer
    an answered dialog can stay on screen above what follows: each kind is taken once, and the
    REPL counts as up when its footer is among the last rows."""
    deadline = time.time() + 120
    done: list[str] = []
    while True:
        scr = s.rec.screen()
        tail = [l for l in scr.splitlines() if l.strip()][-3:]
        if any("? for shortcuts" in l for l in tail) and PROMPT in scr:
            s.rec.settle(1.0)
            tail = [l for l in s.rec.screen().splitlines() if l.strip()][-3:]
            if any("? for shortcuts" in l for l in tail):
                s.snap("idle", "start", f"{what}: first-run screens done ({', '.join(done)}), "
                       "empty prompt")
                return
        hit = next((w for w in FIRSTRUN_WALK if w[0] in scr and w[1] not in done), None)
        if hit:
            needle, kind, keys, desc = hit
            s.snap("blocked", kind, f"{what}: {desc}")
            for k in keys:
                if k.startswith("choose:"):
                    choose(s, k[len("choose:"):])
                    continue
                s.rec.send(k)
                time.sleep(0.5)
            done.append(kind)
            s.rec.settle(0.8)
            continue
        if time.time() > deadline:
            raise TimeoutError(f"[{s.tag}] first run: an unknown screen:\n{scr}")
        time.sleep(0.2)


def sc_firstrun_onboarding(s: Session, p: dict) -> None:
    if FIRSTRUN_WALK:
        return walk_first_run(s, "first run (no onboarding, key pre-approved)")
    s.wait(DLG_THEME, timeout=60)
    s.snap("blocked", "theme-picker", "first run (no onboarding, key pre-approved): theme picker")
    s.rec.send("Down")
    time.sleep(0.5)
    s.rec.send("Enter")
    s.wait(DLG_NOTES, timeout=20)
    s.snap("blocked", "security-notes", "first run: security notes, waits for Enter")
    s.rec.send("Enter")
    s.wait(DLG_TRUST, timeout=20)
    s.snap("blocked", "folder-trust", "first run: folder trust dialog")
    s.rec.send("Down")
    time.sleep(0.4)
    s.rec.send("Enter")
    s.wait("❯", "? for shortcuts", timeout=60)
    s.snap("idle", "start", "first run done: trust accepted, empty prompt")


def sc_firstrun_key(s: Session, p: dict) -> None:
    if FIRSTRUN_WALK:
        return walk_first_run(s, "onboarding done, key not approved, folder not trusted")
    s.wait(DLG_TRUST, timeout=60)
    s.snap("blocked", "folder-trust", "onboarding done, folder not trusted: trust dialog")
    s.rec.send("Down")
    time.sleep(0.4)
    s.rec.send("Enter")
    s.wait(DLG_KEY, timeout=20)
    s.snap("blocked", "api-key-approval", "key not yet approved: 'Detected a custom API key' dialog")
    s.rec.send("Up")
    time.sleep(0.4)
    s.rec.send("Enter")
    s.wait("❯", "? for shortcuts", timeout=60, absent=(DLG_KEY,))
    s.snap("idle", "start", "API key accepted, empty prompt")


def sc_read_reject(s: Session, p: dict) -> None:
    s.prompt(f"{p['read_prompt']} READFILE {p['read_file']}")
    s.wait(DLG_BASH, READ_DLG, timeout=30)
    s.snap("blocked", "read-approval", "mock calls Read on a file outside the project; the "
           "read permission dialog is up")
    s.rec.send("Escape")
    s.wait_idle(timeout=30)
    s.snap("idle", "rejected-esc", "the read dialog was rejected with Esc")


def sc_fetch(s: Session, p: dict) -> None:
    s.prompt(f"{p['fetch_prompt']} FETCHURL {p['fetch_url']}")
    s.wait("Do you want", "❯ 1.", timeout=30)  # this dialog has no "Esc to cancel" footer
    s.snap("blocked", "fetch-approval", "mock calls WebFetch; the fetch permission dialog is up")
    s.rec.send("Escape")
    s.wait_idle(timeout=30)
    s.snap("idle", "rejected-esc", "the fetch dialog was rejected with Esc")


def sc_ask_multi(s: Session, p: dict) -> None:
    s.prompt(f"{p['askmulti_prompt']} ASKMULTI")
    s.wait("Which test runner", "Esc to cancel", timeout=30)
    s.snap("blocked", "ask-user-question", "mock calls AskUserQuestion with two questions "
           "(tabbed, the second multi-select); the first question is up")
    s.rec.send("Enter")
    s.wait("Which checks", timeout=10)
    time.sleep(0.5)
    s.snap("blocked", "ask-user-question", "two-question AskUserQuestion: the first answered, "
           "the multi-select second question is up")
    s.rec.send("Escape")
    s.wait_idle(timeout=30)
    s.snap("idle", "rejected-esc", "the question picker was dismissed with Esc")


def sc_reply_lookalike(s: Session, p: dict) -> None:
    s.prompt(f"{p['lookalike_prompt']} ENDPROCEED")
    s.wait("show me the SQL first", timeout=30)
    # wait_idle would refuse: the reply itself holds the dialog wording it looks for
    s.wait(PROMPT, "? for shortcuts", timeout=30, absent=(WORKING,))
    s.snap("idle", "reply-question", "the reply quotes dialog wording as plain text ('Do you "
           "want to proceed?', a numbered '1. Yes' list, 'Esc to cancel'): turn is over")


def sc_draft(s: Session, p: dict) -> None:
    text = p["draft"]
    for ch in text:
        s.rec.send("\\;" if ch == ";" else ch, literal=True)
        time.sleep(0.01)
    s.wait(text[-12:], timeout=10)
    s.snap("idle", "draft-input", "idle with an unsent draft typed into the input box")
    for _ in text:
        s.rec.send("BSpace")
    s.wait("? for shortcuts", timeout=10)


def sc_accept_edits(s: Session, p: dict) -> None:
    s.rec.send("BTab")
    s.wait("accept edits on", timeout=5)
    s.snap("idle", "accept-edits-mode", "idle in accept-edits mode (no '? for shortcuts' footer)")
    s.prompt(f"{p['ae_prompt']} WRITEFILE {p['ae_file']}")
    # 2.0.77 can finish the whole turn between two looks at the screen
    s.wait_any(WORKING, "The step finished", timeout=20)
    s.wait_idle(timeout=40)
    s.snap("idle", "approved-done", "in accept-edits mode the Write ran without a dialog; turn over")
    back_to_default_mode(s)  # accept edits -> plan -> auto -> manual


def sc_overload(s: Session, p: dict) -> None:
    s.prompt(f"{p['overload_prompt']} OVERLOAD 5")
    s.wait(WORKING, RETRYING, timeout=30)
    time.sleep(1.0)
    s.snap("working", "api-retry", "the mock answers 529 overloaded 5 times: the CLI shows "
           "'529 Overloaded · retrying in Ns · attempt n/10' and retries", settle=None)
    s.wait_idle(timeout=90)


def sc_api_error(s: Session, p: dict) -> None:
    s.prompt(f"{p['error_prompt']} BADREQUEST")
    s.wait("API Error", timeout=30)
    s.wait_idle(timeout=30)
    s.snap("idle", "api-error", "the mock answers 400 invalid_request_error: the turn ends with "
           "'API Error: 400 …'")


# A stale spinner row: another process writes to the pane's terminal while the spinner runs
# (a background job, a notification: anything that moves the cursor under the classic renderer),
# so Ink's relative erase misses the spinner row it drew, and that row stays on screen above the
# finished turn ("✶ Sketching… (4s · ↓ 40 tokens)" over "✻ Sautéed for 7s · done"). The Bash
# tool's children have no controlling terminal (/dev/tty: ENXIO), so the helper writes to the
# first ancestor's terminal (the CLI's pane) after 4 s, while the tool and its spinner run.
TERM_NOISE = """import os, time
time.sleep(4)
pid = os.getppid()
while pid > 1:
    try:
        tty = os.readlink(f"/proc/{pid}/fd/0")
    except OSError:
        tty = ""
    if tty.startswith("/dev/pts/"):
        fd = os.open(tty, os.O_WRONLY)
        os.write(fd, b"\\n" * 12)
        os.close(fd)
        break
    pid = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
time.sleep(3)
"""


def sc_stale_spinner(s: Session, p: dict) -> None:
    helper = s.proj / "tools" / "term_noise.py"
    helper.parent.mkdir(parents=True, exist_ok=True)
    helper.write_text(TERM_NOISE)
    s.prompt(f"{p['noise_prompt']} RUNCMD python3 tools/term_noise.py")
    if s.wait_any(DLG_BASH, "The step finished", timeout=30) == DLG_BASH:
        for _ in range(3):  # 1. Yes (an Enter right as the dialog draws can be lost)
            time.sleep(1.0)
            s.rec.send("Enter")
            time.sleep(1.0)
            if DLG_BASH not in s.rec.screen():
                break
    s.wait("The step finished", timeout=40)
    # the stale rows may hold a stale footer too: idle is the fresh footer in the last rows
    end = time.time() + 30
    while True:
        tail = [l for l in s.rec.screen().splitlines() if l.strip()][-2:]
        if any(f in l for l in tail for f in IDLE_FOOTERS):
            break
        if time.time() > end:
            raise TimeoutError(f"[{s.tag}] never idle:\n{s.rec.screen()}")
        time.sleep(0.2)
    s.snap("idle", "stale-spinner", "a helper run by Bash wrote newlines to the pane's terminal "
           "while the spinner ran: the classic renderer's erase missed that spinner row, which "
           "stays above the finished turn (its completion line, the idle footer)", settle=1.0)


# -- turns that end in an error (mock_anthropic.py TURN_ERRORS; sessions e1-e4) ------------------
# Every model call of the turn fails; the sessions cap the CLI's retries (CLAUDE_CODE_MAX_RETRIES)
# so a retried error gives up after a few seconds instead of ten attempts with backoff. The
# retry row names the status only from the last attempts on ("✻ API error · retrying in 1s ·
# attempt 1/4", then "✻ 429 <message> · retrying in 3s · attempt 3/4"): the working shot waits
# for the status.
TURN_ERROR_CASES = {
    # scenario: (mock keyword, status on the retry row or None (not retried), mark, what it is)
    "err_rate_limit": ("RATELIMITED", "429", "rate-limit", "HTTP 429 rate_limit_error"),
    "err_overloaded": ("SATURATED", "529", "overloaded", "HTTP 529 overloaded_error on every call"),
    "err_auth": ("BADKEY", "401", "auth", "HTTP 401 authentication_error (invalid x-api-key)"),
    "err_credit": ("NOCREDIT", None, "quota",
                   "HTTP 400 'Your credit balance is too low to access the Anthropic API'"),
}


def turn_error_scenario(name: str):
    kw, status, mark, what = TURN_ERROR_CASES[name]

    def run(s: Session, p: dict) -> None:
        s.prompt(f"{p[name + '_prompt']} {kw}")
        if status:
            end = time.time() + 40
            while not any(f"{status} " in r and RETRYING in r
                          for r in s.rec.screen().splitlines()):
                if time.time() > end:
                    raise TimeoutError(f"[{s.tag}] no '{status} … {RETRYING}' row:\n"
                                       + s.rec.screen())
                time.sleep(0.1)
            time.sleep(0.3)
            s.snap("working", f"{mark}-retry", f"the mock answers every call with {what}: the "
                   f"CLI retries, its spinner row names the status ('{status} … · retrying in Ns "
                   f"· attempt n/{p['env']['CLAUDE_CODE_MAX_RETRIES']}')", settle=None, mark=mark)
        s.wait_idle(timeout=90)
        s.snap("idle", mark, f"the mock answers every call with {what}"
               + (", the retries ran out" if status else " (not retried)")
               + ": the turn ended in the error", mark=mark)
    run.__name__ = "sc_" + name
    return run


# -- signals a screen can lack (sessions t*, u*, m*; NOTES-claude.md "Title, transcript view,
# reduced motion") ------------------------------------------------------------------------------
TRANSCRIPT = "Showing detailed transcript"  # the transcript view's footer (ctrl+o)


def title_frames(s: Session, secs: float = 2.0) -> list[str]:
    seen: list[str] = []
    end = time.time() + secs
    while time.time() < end:
        t = s.rec.title().strip()
        if t not in seen:
            seen.append(t)
        time.sleep(0.05)
    return seen


def sc_transcript(s: Session, p: dict) -> None:
    """ctrl+o (the transcript view) hides the spinner row, the input box and its footer: a turn
    running, a dialog up, and nothing, each seen from inside the view."""
    s.prompt(f"{p['transcript_prompt']} STREAMSLOW 20")
    s.wait(WORKING, STREAMING, timeout=30)
    s.rec.send("C-o")
    s.wait(TRANSCRIPT, timeout=10)
    time.sleep(2.5)
    log(f"[{s.tag}] title while streaming in the transcript view: {title_frames(s)}")
    s.snap("working", "transcript-view", "a long reply streams; the user pressed ctrl+o: the "
           "transcript view has no spinner row and no input footer (the terminal title may "
           "still spin)", settle=None, need=TRANSCRIPT)
    s.rec.send("C-o")
    s.wait(PROMPT, timeout=10, absent=(TRANSCRIPT,))
    s.wait_idle(timeout=60)
    s.prompt(f"{p['transcript_cmd_prompt']} RUNCMD {p['transcript_cmd']}")
    s.wait(DLG_BASH, timeout=30)
    log(f"[{s.tag}] title with the dialog up: {title_frames(s, 1.0)}")
    s.rec.send("C-o")
    s.wait(TRANSCRIPT, timeout=10, absent=(DLG_BASH,))
    s.snap("blocked", "transcript-view-dialog", "the Bash permission dialog is up; the user "
           "pressed ctrl+o: the transcript view hides the dialog, its footer says a dialog "
           "waits", need=None)
    s.rec.send("C-o")
    s.wait(DLG_BASH, timeout=10, absent=(TRANSCRIPT,))
    s.rec.send("Escape")
    s.wait_idle(timeout=30)
    s.rec.send("C-o")
    s.wait(TRANSCRIPT, timeout=10)
    s.snap("idle", "transcript-view", "nothing runs; the user pressed ctrl+o: the transcript "
           "view", need=None)
    s.rec.send("C-o")
    s.wait(PROMPT, timeout=10, absent=(TRANSCRIPT,))


def sc_title_working(s: Session, p: dict) -> None:
    """A turn waiting on its first token, for the terminal title's spinner frame."""
    s.prompt(f"{p['title_prompt']} DELAYFIRST 14")
    s.wait(WORKING, timeout=30)
    time.sleep(2)
    frames = title_frames(s)
    log(f"[{s.tag}] title while busy: {frames}")
    s.snap("working", "before-first-token", "prompt sent, mock holds the reply 14 s; title "
           f"frames seen: {' | '.join(frames[:4])}", settle=None)
    s.wait_idle(timeout=40)


def sc_reduced_motion(s: Session, p: dict) -> None:
    """prefersReducedMotion: the spinner row is a static "●" + verb + "…" (+ counter)."""
    # 2.1.332: the row stays "● Coalescing… (0s · ↓ 3 tokens)", its counter frozen, and a
    # streamed reply shows only once it is done: a turn waiting on its first token looks the same
    s.prompt(f"{p['rm_prompt']} DELAYFIRST 14")
    s.wait(WORKING, timeout=30)
    time.sleep(4)
    log(f"[{s.tag}] title with reduced motion: {title_frames(s, 1.0)}")
    s.snap("working", "reduced-motion", "prefersReducedMotion: the mock holds the reply 14 s; "
           "the spinner row is a static '●' + verb + '…' + counter", settle=None)
    s.wait_idle(timeout=60)
    s.prompt(f"{p['rm_reply_prompt']} ENDELLIPSIS")
    s.wait("Working on it…", timeout=30)
    s.wait_idle(timeout=30)
    s.snap("idle", "reply-ellipsis", "prefersReducedMotion: the reply is one row ending in '…' "
           "('● Working on it…'), the turn is over")


SCENARIOS = {f.__name__[3:]: f for f in [
    sc_transcript, sc_title_working, sc_reduced_motion,
    *(turn_error_scenario(n) for n in TURN_ERROR_CASES),
    sc_overload, sc_api_error, sc_stale_spinner,
    sc_reply_lookalike, sc_draft, sc_accept_edits,
    sc_read_reject, sc_fetch, sc_ask_multi,
    sc_start, sc_first_token, sc_stream, sc_bash_approve, sc_long_tool, sc_write_reject,
    sc_edit_approve, sc_bash_reject, sc_ask, sc_question_reply, sc_interrupt, sc_plan,
    sc_firstrun_onboarding, sc_firstrun_key]}

SEED = {
    "README.md": "# demo\n\nA small demo project.\n",
    "src/app.py": "TIMEOUT=10\nRETRIES=3\n\n\ndef main():\n    return TIMEOUT * RETRIES\n",
    "lib/util.js": "export const mode = 'debug';\nexport function id(x) { return x }\n",
    "config/app.ini": "[server]\nport=8080\nworkers=2\n",
}

# tag: (renderer, rows, cols, config, scenarios, params)
SESSIONS: dict[str, tuple] = {
    "s1": ("fullscreen", 24, 80, "onboarding", ["firstrun_onboarding"], {}),
    "s2": ("classic", 48, 160, "key-unapproved", ["firstrun_key"], {}),
    "s3": ("classic", 24, 80, "onboarding", ["firstrun_onboarding"], {}),
    "s4": ("fullscreen", 48, 160, "key-unapproved", ["firstrun_key"], {}),
    "a1": ("fullscreen", 24, 80, "ready",
           ["start", "first_token", "stream", "bash_approve", "long_tool", "question_reply"], {
               "delay_prompt": "check the parser for off-by-one errors",
               "stream_prompt": "walk me through how the module works",
               "bash_prompt": "set up the build output folder",
               "bash_cmd": "mkdir -p build && touch build/out.txt",
               "long_prompt": "run the slow integration step",
               "long_cmd": "python3 -c 'import time; time.sleep(25)' && echo finished > stamp.txt",
               "question_prompt": "fix the loop bound bug in the reader",
           }),
    "b1": ("fullscreen", 24, 80, "ready",
           ["write_reject", "edit_approve", "ask", "interrupt", "plan"], {
               "write_prompt": "draft some release notes in a new file",
               "write_file": "docs/release-notes.md",
               "edit_prompt": "raise the timeout a bit",
               "edit": ("src/app.py", "TIMEOUT=10", "TIMEOUT=45"),
               "ask_prompt": "add caching to the lookups, ask me which store to use",
               "interrupt_prompt": "summarise the architecture in detail",
               "plan_prompt": "plan adding retries to the HTTP client",
           }),
    "a2": ("classic", 48, 160, "ready",
           ["start", "bash_approve", "stream", "question_reply", "long_tool", "first_token"], {
               "delay_prompt": "review the config loader",
               "stream_prompt": "describe the record format and the writer",
               "bash_prompt": "archive the sources for the release",
               "bash_cmd": "tar czf /tmp/src-backup.tgz src lib && rm -f config/app.ini.bak",
               "long_prompt": "wait for the mock service to come up",
               "long_cmd": "perl -e 'sleep 24'; date > stamp.txt",
               "question_prompt": "the parser crashes on the last record, please fix it",
           }),
    "b2": ("classic", 48, 160, "ready",
           ["ask", "plan", "edit_approve", "interrupt", "write_reject", "bash_reject"], {
               "write_prompt": "add a deployment script",
               "write_file": "scripts/deploy.sh",
               "edit_prompt": "switch the default mode to production",
               "edit": ("lib/util.js", "'debug'", "'production'"),
               "ask_prompt": "pick a storage backend with me before coding",
               "ask_answer": False,
               "interrupt_prompt": "explain every phase of the pipeline at length",
               "plan_prompt": "plan a migration of the config format to TOML",
               "reject_prompt": "clean the workspace",
               "reject_cmd": "rm -rf build dist && git clean -fdx",
           }),
    "a3": ("fullscreen", 48, 160, "ready",
           ["start", "bash_reject", "long_tool", "stream", "ask", "edit_approve"], {
               "stream_prompt": "tell me what the serializer does step by step",
               "reject_prompt": "reset the generated assets",
               "reject_cmd": "rm -rf public/assets && mkdir public/assets",
               "long_prompt": "run the benchmark loop",
               "long_cmd": "for i in 1 2 3 4 5 6; do sleep 4; done; echo bench-done",
               "ask_prompt": "set up persistence, check with me on the backend",
               "edit_prompt": "use four workers",
               "edit": ("config/app.ini", "workers=2", "workers=4"),
           }),
    "b3": ("classic", 24, 80, "ready",
           ["start", "first_token", "plan", "question_reply", "write_reject", "bash_approve",
            "interrupt"], {
               "delay_prompt": "look into the flaky date test",
               "plan_prompt": "plan splitting the app module into two",
               "question_prompt": "the loop reads one record too many, fix it",
               "write_prompt": "create a CI config",
               "write_file": "ci/pipeline.yml",
               "bash_prompt": "record the python version in a file",
               "bash_cmd": "python3 --version > pyver.txt && cp pyver.txt pyver.bak",
               "interrupt_prompt": "give me a long overview of the code base",
           }),
    "a4": ("fullscreen", 30, 100, "ready",
           ["start", "question_reply", "write_reject", "bash_approve"], {
               "question_prompt": "correct the range check in the tokenizer",
               "write_prompt": "write a changelog entry file",
               "write_file": "CHANGES.txt",
               "bash_prompt": "make a scratch copy of the readme",
               "bash_cmd": "cp README.md /tmp/readme-copy.md && chmod 600 /tmp/readme-copy.md",
           }),
    "c1": ("fullscreen", 20, 60, "ready",
           ["start", "bash_approve", "read_reject", "stream", "ask_multi", "first_token"], {
               "bash_prompt": "bump the patch version",
               "bash_cmd": "sed -i 's/port=8080/port=9090/' config/app.ini && git init -q",
               "read_prompt": "check the os release",
               "read_file": "/etc/os-release",
               "stream_prompt": "how does the cache layer work",
               "askmulti_prompt": "set up testing, ask me about the details",
               "delay_prompt": "audit the dependency list",
           }),
    "c2": ("classic", 40, 120, "ready",
           ["fetch", "long_tool", "edit_approve", "question_reply", "plan", "interrupt",
            "ask_multi"], {
               "fetch_prompt": "read the upstream docs",
               "fetch_url": "https://docs.example.org/guide/install",
               "long_prompt": "compile the assets",
               "long_cmd": "node -e 'setTimeout(() => console.log(1), 23000)' > node.log",
               "edit_prompt": "export a better identity helper",
               "edit": ("lib/util.js", "return", "return/*id*/"),
               "question_prompt": "the CSV parser skips the last row, sort it out",
               "plan_prompt": "plan a rewrite of the logging setup",
               "interrupt_prompt": "narrate the request lifecycle end to end",
               "askmulti_prompt": "prepare the test setup with me",
           }),
    "c3": ("fullscreen", 40, 120, "ready",
           ["draft", "reply_lookalike", "accept_edits", "bash_approve"], {
               "draft": "Do you want to proceed? 1. Yes (Esc to cancel) draft only",
               "lookalike_prompt": "migrate the users table",
               "ae_prompt": "write the migration notes",
               "ae_file": "notes/migration.txt",
               "bash_prompt": "stamp the build",
               "bash_cmd": "date +%s > build.stamp && ls -la > listing.txt",
           }),
    "c4": ("classic", 30, 100, "ready",
           ["reply_lookalike", "draft", "read_reject", "ask_multi"], {
               "draft": "fix the flaky test, then tell me: Do you want to proceed?",
               "lookalike_prompt": "apply the pending schema change",
               "read_prompt": "what is in the hosts file",
               "read_file": "/etc/hosts",
               "askmulti_prompt": "configure the test tooling together with me",
           }),
    "c5": ("classic", 36, 110, "ready",
           ["overload", "api_error", "bash_reject"], {
               "overload_prompt": "summarise the open issues",
               "error_prompt": "attach the screenshot and describe it",
               "reject_prompt": "drop the local database",
               "reject_cmd": "dropdb --if-exists app_dev && createdb app_dev",
           }),
    "c6": ("fullscreen", 24, 80, "ready",
           ["api_error", "overload", "write_reject"], {
               "overload_prompt": "list the modules by size",
               "error_prompt": "read the attached PDF",
               "write_prompt": "save a todo list",
               "write_file": "TODO.md",
           }),
    # a spinner row left above a finished turn (sc_stale_spinner): classic renderer only (the
    # fullscreen renderer redraws its whole alternate screen)
    "d1": ("classic", 24, 80, "ready", ["stale_spinner"], {"noise_prompt": "check the terminal"}),
    "d2": ("classic", 40, 120, "ready", ["stale_spinner"], {"noise_prompt": "probe the tty"}),
    # plan approval in the fullscreen renderer at a wide size (b1 has it at 80x24)
    "d3": ("fullscreen", 40, 120, "ready", ["plan"], {
        "plan_prompt": "plan moving the settings into environment variables"}),
    # the terminal title's spinner and the transcript view (ctrl+o): t* with TMUX, STY, ZELLIJ
    # unset in the CLI's env (as over ssh from inside tmux; 2.1.267+ animate the title only then),
    # u* under tmux as it is (2.1.220 animates the title there too)
    "t1": ("fullscreen", 24, 80, "ready", ["title_working", "transcript"], {
        "no_mux": True, "title_prompt": "check the loader", "transcript_prompt": "walk me "
        "through the parser", "transcript_cmd_prompt": "make a build dir",
        "transcript_cmd": "mkdir -p build && touch build/a.txt"}),
    "t2": ("classic", 40, 120, "ready", ["transcript", "title_working"], {
        "no_mux": True, "title_prompt": "audit the config", "transcript_prompt": "explain "
        "the writer", "transcript_cmd_prompt": "stamp the tree",
        "transcript_cmd": "date > stamp.txt && cp stamp.txt stamp.bak"}),
    "u1": ("classic", 24, 80, "ready", ["transcript"], {
        "transcript_prompt": "describe the cache", "transcript_cmd_prompt": "copy the readme",
        "transcript_cmd": "cp README.md /tmp/readme.bak && chmod 600 /tmp/readme.bak"}),
    "u2": ("fullscreen", 40, 120, "ready", ["transcript"], {
        "transcript_prompt": "outline the format", "transcript_cmd_prompt": "touch a marker",
        "transcript_cmd": "touch marker && ls -la > ls.txt"}),
    # reduce motion (the `prefersReducedMotion` setting, /config "Reduce motion")
    "m1": ("classic", 24, 80, "ready", ["reduced_motion"], {
        "settings": {"prefersReducedMotion": True}, "rm_prompt": "walk through the reader",
        "rm_reply_prompt": "start on the refactor"}),
    "m2": ("fullscreen", 40, 120, "ready", ["reduced_motion"], {
        "settings": {"prefersReducedMotion": True}, "rm_prompt": "explain the record layout",
        "rm_reply_prompt": "begin the cleanup"}),
    # turns that end in an error (TURN_ERROR_CASES), each kind in a different order
    "e1": ("classic", 24, 80, "ready",
           ["err_rate_limit", "err_overloaded", "err_auth", "err_credit"], {
               "env": {"CLAUDE_CODE_MAX_RETRIES": "4"},
               "err_rate_limit_prompt": "summarise the open issues",
               "err_overloaded_prompt": "list the modules by size",
               "err_auth_prompt": "explain the config loader",
               "err_credit_prompt": "review the last commit",
           }),
    "e2": ("fullscreen", 24, 80, "ready",
           ["err_overloaded", "err_credit", "err_rate_limit", "err_auth"], {
               "env": {"CLAUDE_CODE_MAX_RETRIES": "4"},
               "err_rate_limit_prompt": "check the test coverage",
               "err_overloaded_prompt": "describe the build steps",
               "err_auth_prompt": "what does the util module export",
               "err_credit_prompt": "suggest a better name for main",
           }),
    "e3": ("classic", 40, 120, "ready",
           ["err_auth", "err_rate_limit", "err_credit", "err_overloaded"], {
               "env": {"CLAUDE_CODE_MAX_RETRIES": "4"},
               "err_rate_limit_prompt": "find the slowest function",
               "err_overloaded_prompt": "outline the data flow",
               "err_auth_prompt": "count the lines of code",
               "err_credit_prompt": "draft a short README section",
           }),
    "e4": ("fullscreen", 40, 120, "ready",
           ["err_credit", "err_auth", "err_overloaded", "err_rate_limit"], {
               "env": {"CLAUDE_CODE_MAX_RETRIES": "4"},
               "err_rate_limit_prompt": "which files changed most",
               "err_overloaded_prompt": "sketch a plan for the cache",
               "err_auth_prompt": "name the entry points",
               "err_credit_prompt": "tidy the imports",
           }),
}


OVERRIDE: dict = {}  # --size / --renderer: re-run sessions in another shape (held-out checks)


def run_session(tag: str, mock: Mock, entries: list[dict], errors: list[str]) -> None:
    renderer, rows, cols, config, scenarios, params = SESSIONS[tag]
    rows, cols = OVERRIDE.get("size", (rows, cols))
    renderer = OVERRIDE.get("renderer", renderer)
    if not FULLSCREEN:  # a release before the fullscreen renderer: every session is classic
        renderer = "classic"
    s = Session(tag, renderer, rows, cols, config, mock, entries, seed=SEED,
                extra_env=params.get("env"), no_mux=params.get("no_mux", False),
                settings=params.get("settings"))
    try:
        if config == "ready":  # keys typed before the REPL is up land in the banner
            s.wait(PROMPT, "? for shortcuts", timeout=60)
        for name in scenarios:
            if name in UNSUPPORTED:
                log(f"[{tag}] skip {name}: {UNSUPPORTED[name]}")
                continue
            log(f"[{tag}] scenario {name}")
            SCENARIOS[name](s, params)
        raw = s.rec.raw.read_bytes()
        alt = b"\x1b[?1049h" in raw
        if alt != (renderer == "fullscreen"):
            errors.append(f"[{tag}] renderer {renderer} but alternate screen seen={alt}")
    except Exception as exc:  # keep what was captured so far
        errors.append(f"[{tag}] {type(exc).__name__}: {exc}")
        traceback.print_exc()
        (RUNS / f"claude-failed-{tag}.screen.txt").write_text(s.rec.screen())
    finally:
        s.close()
        log(f"[{tag}] closed")


def write_index(entries: list[dict]) -> None:
    common.write_index(OUT, sorted(entries, key=lambda e: e["file"]),
                       ["# Claude Code fixtures, written by harness/claude.py (do not edit by hand)."],
                       keys=["file", "state", "kind", "agent", "agent_version", "size", "renderer", "how",
                             "mark"])


def capture(only: list[str] | None, jobs: int) -> int:
    if not BIN.exists():
        print("run `python harness/claude.py install` first", file=sys.stderr)
        return 2
    OUT.mkdir(parents=True, exist_ok=True)
    tags = only or list(SESSIONS)
    unknown = [t for t in tags if t not in SESSIONS]
    if unknown:
        print(f"unknown session(s) {unknown}; see `python harness/claude.py list`", file=sys.stderr)
        return 2
    entries: list[dict] = []
    idx = OUT / "index.toml"
    if idx.exists():
        old = common.load_index(OUT).values()
        entries = [e for e in old if not any(f"-{t}-" in e["file"] for t in tags)]
    for t in tags:  # drop this session's old files
        for f in OUT.glob(f"*-{t}-*"):
            f.unlink()
    mock = Mock(MOCK_LOG)
    log(f"mock on port {mock.port}")
    errors: list[str] = []
    try:
        pending = list(tags)
        running: list[threading.Thread] = []
        while pending or running:
            running = [t for t in running if t.is_alive()]
            while pending and len(running) < jobs:
                tag = pending.pop(0)
                th = threading.Thread(target=run_session, args=(tag, mock, entries, errors))
                th.start()
                running.append(th)
                time.sleep(1.0)
            time.sleep(0.5)
    finally:
        mock.close()
    write_index(entries)
    log(f"{len(entries)} fixtures in {idx}")
    for e in errors:
        print("ERROR", e, file=sys.stderr)
    return 1 if errors else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Claude Code fixture driver")
    sub = ap.add_subparsers(dest="cmd", required=True)
    i = sub.add_parser("install")
    c = sub.add_parser("capture")
    c.add_argument("--only", action="append", help="session tag (repeatable); see `list`")
    c.add_argument("--jobs", type=int, default=2, help="sessions run in parallel")
    c.add_argument("--size", help="ROWSxCOLS for every selected session (held-out runs)")
    c.add_argument("--renderer", choices=["fullscreen", "classic"],
                   help="renderer for every selected session (held-out runs)")
    for p_ in (i, c):
        p_.add_argument("--version", help=f"another release than the pinned {PINNED}: installed "
                        "in /work/agents/claude-<V>, fixtures in fixtures/claude/<V>/")
        p_.add_argument("--out", help="write fixtures here instead of fixtures/claude "
                        "(or fixtures/claude/<V>/ with --version; held-out runs)")
    sub.add_parser("list")
    a = ap.parse_args(argv)
    if getattr(a, "version", None) or getattr(a, "out", None):
        configure(a.version, a.out)
    if a.cmd == "install":
        return install()
    if a.cmd == "list":
        for tag, (r, rows, cols, cfg, scs, _) in SESSIONS.items():
            print(f"{tag}: {r} {cols}x{rows} config={cfg}: {', '.join(scs)}")
        return 0
    if a.size:
        r, _, c_ = a.size.partition("x")
        OVERRIDE["size"] = (int(r), int(c_))
    if a.renderer:
        OVERRIDE["renderer"] = a.renderer
    return capture(a.only, a.jobs)


if __name__ == "__main__":
    sys.exit(main())
