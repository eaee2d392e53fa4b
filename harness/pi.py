#!/usr/bin/env python3
"""Capture real pi (npm @mariozechner/pi-coding-agent) fixtures against a mock OpenAI server.

    python harness/pi.py install                 # npm install the pinned pi-coding-agent
    python harness/pi.py capture [--only NAME]   # run the scenarios, write fixtures/pi/
    python harness/pi.py list                    # the sessions

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
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import AGENTS, REPO  # noqa: E402

VERSION = "0.73.1"
PREFIX = AGENTS / f"pi-{VERSION}"
PI_BIN = PREFIX / "node_modules" / ".bin" / "pi"
EXAMPLES = PREFIX / "node_modules" / "@mariozechner" / "pi-coding-agent" / "examples" / "extensions"
OUT = REPO / "fixtures" / "pi"
WORKING = "Working..."
GATE_HINT = "↑↓ navigate  enter select"
QUESTION_HINT = "Enter to select • Esc to cancel"


def install() -> None:
    if PI_BIN.exists():
        out = subprocess.run([str(PI_BIN), "--version"], capture_output=True, text=True,
                             env={**os.environ, "PI_OFFLINE": "1"})
        if VERSION in out.stdout + out.stderr:
            print(f"already installed: {VERSION} in {PREFIX}")
            return
    PREFIX.mkdir(parents=True, exist_ok=True)
    subprocess.run(["npm", "install", "--no-fund", "--no-audit", "--prefix", str(PREFIX),
                    f"@mariozechner/pi-coding-agent@{VERSION}"], check=True)


@dataclass
class Session:
    name: str
    rows: int
    cols: int
    project: str = "proj"
    extensions: tuple[str, ...] = ("permission-gate.ts", "question.ts")


class Ctx(common.Ctx):
    agent, version, out = "pi", VERSION, OUT

    def wait_idle(self, timeout: float = 90) -> str:
        """No spinner row, no dialog hint: the turn is over."""
        def idle(s: str) -> bool:
            tail = "\n".join(s.rstrip().split("\n")[-8:])   # dialogs sit just above the footer
            return (WORKING not in s and GATE_HINT not in s and QUESTION_HINT not in s
                    and "cancel" not in tail)
        scr = self.wait(idle, "idle", timeout)
        self.rec.settle(0.8, timeout=10)
        return scr

    def prompt(self, text: str) -> None:
        """Type a prompt and make sure a turn started (the Working... loader was drawn)."""
        self.type_and_submit(text, lambda mark: WORKING.encode() in self.new_bytes(mark))

    def take(self, dest: Path, settle: float | None) -> dict:
        # the spinner redraws every 80 ms: keep tmux's screen for exactly the copied bytes
        return self.rec.snapshot_quiet(dest, settle=settle)


# ----------------------------------------------------------------------------------------------
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
    c.wait_text("Operation aborted")
    c.wait_idle()
    c.shot("idle-after-interrupt", "idle", "after-interrupt",
           "pressed Esc while the reply streamed: 'Operation aborted'")


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
    c.wait_text(QUESTION_HINT)
    c.shot("blocked-question", "blocked", "question",
           "mock calls the question tool (question.ts): options picker", settle=None)
    c.key("Down")
    c.rec.send("Enter")
    c.wait_idle()
    c.shot("idle-after-answer", "idle", "after-reply", "picked option 2; mock sent the final text")
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
    c.wait_text(QUESTION_HINT)
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
    for ch in "/new":
        c.rec.send(ch, literal=True)
        time.sleep(0.05)
    time.sleep(0.4)
    c.rec.send("Enter")
    c.wait_text("Clear session?")
    c.rec.settle(0.6)
    c.shot("blocked-confirm-clear", "blocked", "confirm",
           "confirm-destructive.ts: '/new' asks 'Clear session?' (no turn running, no spinner)")
    c.rec.send("Escape")
    c.wait(lambda s: "Clear session?" not in s, "confirm gone")
    c.rec.settle(0.8)
    c.shot("idle-after-confirm-cancel", "idle", "after-reject", "cancelled the clear with Esc")


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
    c.wait_text(QUESTION_HINT)
    c.shot("blocked-question", "blocked", "question", "question tool picker (100 columns)", settle=None)
    c.rec.send("Escape")
    c.wait_idle()
    c.shot("idle-after-question-cancel", "idle", "after-reject", "cancelled the question with Esc")
    for ch in "/new":
        c.rec.send(ch, literal=True)
        time.sleep(0.05)
    time.sleep(0.4)
    c.rec.send("Enter")
    c.wait_text("Clear session?")
    c.rec.settle(0.6)
    c.shot("blocked-confirm-clear", "blocked", "confirm",
           "confirm-destructive.ts: '/new' asks 'Clear session?' (100 columns)")
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
    c.wait_text(QUESTION_HINT)
    c.key("Down", "Down")
    c.rec.send("Enter")
    c.wait_text("Esc to go back")
    c.shot("blocked-question-text-mode", "blocked", "question",
           "question tool: 'Type something.' chosen, empty answer editor", settle=None)
    c.rec.send("Escape")
    c.wait_text(QUESTION_HINT)
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
RUNS = {"first-80": s_first_80, "big-160": s_big_160, "mid-120": s_mid_120, "small-70": s_small_70,
        "mid-100": s_mid_100, "wide-140": s_wide_140}


def make_home(home: Path, proj: Path, port: int) -> None:
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True)
    proj.mkdir(parents=True)
    (proj / "main.py").write_text("def main():\n    for i in range(10 - 1):\n        print(i)\n")
    (proj / "README.md").write_text("# demo\n")
    models = {"providers": {"mock": {
        "baseUrl": f"http://127.0.0.1:{port}/v1", "api": "openai-completions", "apiKey": "mock-key",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": "mock-model"}]}}}
    (agent / "models.json").write_text(json.dumps(models, indent=2))


def run_session(sess: Session, mock: common.Mock, only: str | None, index: dict) -> list[str]:
    base = AGENTS / f"pi-run-{common.stamp(sess)}"
    home, proj = base / "home", base / sess.project
    make_home(home, proj, mock.port)
    env = {"HOME": str(home), "PI_OFFLINE": "1", **common.tmux_env()}
    cmd = [str(PI_BIN), "--provider", "mock", "--model", "mock-model"]
    for e in sess.extensions:
        cmd += ["-e", str(EXAMPLES / e)]
    return common.run_session(sess, lambda rec: Ctx(sess, rec, only, index), RUNS[sess.name],
                              base=base, home=home, cmd=cmd, env=env, cwd=proj)


def capture(only: str | None) -> None:
    common.capture(only, agent="pi", sessions=SESSIONS, out=OUT, bin_=PI_BIN, install=install,
                   run=run_session,
                   start_mock=lambda log: common.Mock("mock_pi.py", log, slow=26, delay=35),
                   title="# Real pi (pi-coding-agent) captures; written by harness/pi.py (do not edit by hand).")


def main() -> None:
    common.main(__doc__, install=install, capture=capture, sessions=SESSIONS,
                describe=lambda s: f"{s.name:10s} {s.cols}x{s.rows} project={s.project} "
                                   f"extensions={','.join(s.extensions)}")


if __name__ == "__main__":
    main()