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
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import AGENTS, REPO  # noqa: E402

PINNED = "0.24.4"
VERSION = PINNED
PREFIX = AGENTS / f"qwen-{VERSION}"
QWEN_BIN = PREFIX / "node_modules" / ".bin" / "qwen"
OUT = REPO / "fixtures" / "qwen"
WORKING, BLOCKED = "◐︎ Qwen", "✳︎ Qwen"


def older_than(v: str) -> bool:
    """True when the release being driven (VERSION) is older than `v`."""
    return common.vtuple(VERSION) < common.vtuple(v)


def configure(version: str | None, out: Path | None) -> None:
    """`--version V` / `--out DIR` (common.main): point the install prefix, the binary and the
    fixture folder at another release; the pinned release keeps fixtures/qwen/."""
    global VERSION, PREFIX, QWEN_BIN, OUT
    if version:
        VERSION = version
        PREFIX = AGENTS / f"qwen-{VERSION}"
        QWEN_BIN = PREFIX / "node_modules" / ".bin" / "qwen"
    OUT = out.resolve() if out else (REPO / "fixtures" / "qwen" if VERSION == PINNED
                                     else common.release_out("qwen", VERSION))
    Ctx.version, Ctx.out = VERSION, OUT  # bound at class definition


# -- what differs by release (seen on real captures; NOTES-qwen.md has the details) -------------
# 0.1.4 is the Gemini-CLI-era UI: the title is a fixed 'Qwen - <dir>' (no working / blocked
# glyph), the loading row reads '(esc to cancel, 3s)', the composer sits in a rounded box with no
# approval-mode hint under it, dialogs are boxes with '● N.' radio rows, and there is no
# ask_user_question tool. The next release in the registry after 0.1.4 is 0.5.0 (not captured):
# "before 0.5.0" means "like 0.1.4".
def legacy() -> bool:
    """The 0.1.x UI (seen on 0.1.4)."""
    return older_than("0.5.0")


def has_ask_tool() -> bool:
    """ask_user_question exists (0.24.4; 0.1.4 offers no question tool at all)."""
    return not legacy()


def install() -> None:
    # the package asks for node >=22 (npm warns EBADENGINE); it runs on node 20
    common.npm_install(PREFIX, QWEN_BIN, "@qwen-code/qwen-code", VERSION)


@dataclass
class Session(common.Session):
    provider: bool = True      # OPENAI_* env set (else the provider screen)
    legacy_only: bool = False  # a session only the 0.1.x driver runs (its first-run dialogs)
    trust: bool = False        # security.folderTrust.enabled (0.1.4: the trust dialog at start)


class Ctx(common.TitleCtx):
    agent, version, out = "qwen", VERSION, OUT
    columns = (42, 22, 8)

    def __init__(self, sess: Session, rec, proj: Path, only: str | None, index: dict):
        super().__init__(sess, rec, only, index)
        self.proj = proj

    def wait_idle(self, timeout: float = 90) -> str:
        """Title 'Qwen - dir' (no state glyph), composer footer up, no 'esc to cancel' row.
        (After Esc on a turn the prompt goes back into the composer, so no placeholder then.)
        0.1.4: the title never changes and there is no footer hint: the boxed composer row
        '│ > …' is up, with no loading row and no pending confirmation."""
        if legacy():
            scr = self.wait(lambda s, t: any(r.lstrip().startswith("│ > ") for r in s.splitlines())
                            and "esc to cancel" not in s and "Waiting for user confirmation" not in s,
                            "idle (boxed composer)", timeout)
        else:
            scr = self.wait(lambda s, t: t.strip().startswith("Qwen - ") and "shift + tab to cycle" in s
                            and "esc to cancel" not in s, "idle", timeout)
        self.rec.settle(0.8, timeout=10)
        return scr

    def wait_title(self, prefix: str, timeout: float = 60) -> str:
        return self.wait(lambda s, t: t.strip().startswith(prefix), f"title {prefix!r}", timeout)

    def wait_working(self, timeout: float = 60) -> str:
        """The working title; 0.1.4 (no title states): the '(esc to cancel, 3s)' loading row."""
        if legacy():
            return self.wait(lambda s, t: "esc to cancel" in s, "loading row", timeout)
        return self.wait_title(WORKING, timeout)

    def prompt(self, text: str) -> None:
        """Type a prompt into the composer; make sure it was submitted (the title left idle)."""
        self.wait_idle()

        def started(mark: int) -> bool:
            raw = self.new_bytes(mark)
            if legacy():   # 0.1.4: no title states; the loading row or a confirmation
                return b"esc to cancel" in raw or b"Waiting for user confirmation" in raw
            return WORKING.encode() in raw or BLOCKED.encode() in raw
        self.rec.send(text, literal=True)
        time.sleep(0.5)
        self.submit(text, started)

    def take(self, dest: Path, settle: float | None) -> dict:
        # working screens never go quiet: keep tmux's screen for exactly the copied bytes
        return self.rec.snapshot_quiet(dest, settle=settle)

    def detail(self, facts: dict, dest: Path) -> str:
        return f" title={facts['title'].strip()!r}"


SLEEP = "python3 -c 'import time; time.sleep({n})'"   # Qwen refuses `sleep N; cmd` chains


# ----------------------------------------------------------------------------------------------
# session scripts

def s_first_80(c: Ctx) -> None:
    c.wait_idle()
    c.shot("idle-start", "idle", "start", "fresh start: logo, tips, empty composer, title 'Qwen - dir'")
    c.prompt(f"please run `{SLEEP.format(n=8)}` now")
    c.wait_text("Allow execution of")
    c.rec.settle(0.6)
    c.shot("blocked-command", "blocked", "shell-permission",
           "run_shell_command under --approval-mode default: 'Allow execution of: …?' (title ✳︎)")
    c.key("Enter")
    c.wait_working()
    time.sleep(2.5)
    c.shot("working-tool-running", "working", "tool-running",
           "approved 'Yes, allow once' with Enter; the 8 s command runs (title ◐︎)", settle=None)
    c.wait_idle()
    c.shot("idle-after-approve", "idle", "after-approve", "the command finished; mock's final text")
    c.prompt("the date parser has a bug with leap years, please fix it")
    c.wait_text("regression test?")
    c.wait_idle()
    c.shot("idle-reply-question", "idle", "reply-question",
           "reply ending 'Would you like me to add a regression test?'")
    c.prompt(f"create {c.proj}/src/cache_utils.py with a helper")
    c.wait_text("Apply this change?")
    c.rec.settle(0.6)
    c.shot("blocked-edit", "blocked", "edit-permission",
           "write_file call: 'WriteFile Writing to …' diff + 'Apply this change?'")
    c.key("Escape")
    c.wait_idle()
    c.shot("idle-after-reject-esc", "idle", "after-reject", "rejected the write with Esc")
    c.prompt("take your time and think about the cache layout")
    c.wait_working()
    time.sleep(3)
    c.shot("working-before-first-token", "working", "waiting-first-token",
           "mock holds the first token; witty loading row '(3s · esc to cancel)'", settle=None)
    c.key("Escape")
    c.wait_idle()
    c.shot("idle-after-interrupt", "idle", "after-interrupt",
           "Esc while waiting for the first token (the prompt goes back into the composer)")


def s_big_160(c: Ctx) -> None:
    c.wait_idle()
    c.shot("idle-start", "idle", "start", "fresh start at 160 columns")
    c.prompt("walk me through the scheduler slowly")
    c.wait_text("careful walk-through")
    time.sleep(3)
    c.shot("working-streaming", "working", "streaming", "slow streamed reply, 3 s in", settle=None)
    time.sleep(5)
    c.shot("working-streaming-late", "working", "streaming", "same reply 8 s in", settle=None)
    c.wait_idle(timeout=60)
    c.shot("idle-after-reply", "idle", "after-reply", "the slow reply finished")
    c.prompt(f"write {c.proj}/docs/NOTES.md with the release notes")
    c.wait_text("Apply this change?")
    c.rec.settle(0.6)
    c.shot("blocked-edit", "blocked", "edit-permission", "write_file confirmation (160 columns)")
    c.key("Enter")
    c.wait_idle()
    c.shot("idle-after-approve-edit", "idle", "after-approve", "allowed the write once; file created")
    c.prompt("execute `mkdir -p build && date > build/stamp.txt` for me")  # read-only commands run unasked
    c.wait_text("Allow execution of")
    c.rec.settle(0.6)
    c.shot("blocked-command", "blocked", "shell-permission", "shell confirmation (160 columns)")
    if legacy():   # 0.1.4: three options, '3. No, suggest changes (esc)'
        c.key("Down", "Down")
        c.rec.settle(0.4)
        c.shot("blocked-command-no-selected", "blocked", "shell-permission",
               "same dialog with '3. No, suggest changes (esc)' selected")
    else:
        c.key("Down", "Down", "Down")
        c.rec.settle(0.4)
        c.shot("blocked-command-no-selected", "blocked", "shell-permission",
               "same dialog with '4. No, suggest changes (esc)' selected")
    c.key("Enter")
    c.wait_idle()
    c.shot("idle-after-reject", "idle", "after-reject", "picked 'No, suggest changes' with Enter")
    c.prompt("there's an off-by-one in the pager, can you fix it")
    c.wait_text("regression test?")
    c.wait_idle()
    c.shot("idle-reply-question", "idle", "reply-question", "reply ending with a question (160 columns)")


def s_mid_120(c: Ctx) -> None:
    c.wait_idle()
    c.prompt(f"run `{SLEEP.format(n=10)}` to warm the cache")
    c.wait_text("Allow execution of")
    c.rec.settle(0.6)
    c.shot("blocked-command", "blocked", "shell-permission", "shell confirmation (120 columns)")
    c.key("Down")
    c.key("Enter")
    c.wait_working()
    time.sleep(3)
    c.shot("working-tool-running", "working", "tool-running",
           "approved 'Always allow … in this project'; the 10 s command runs", settle=None)
    c.wait_idle(timeout=60)
    c.shot("idle-after-approve", "idle", "after-approve", "the command finished")
    common.delayed_reply(c)
    c.prompt("explain the token refresh flow in detail")
    c.wait_text("careful walk-through")
    time.sleep(3)
    c.key("Escape")
    c.wait_idle()
    c.shot("idle-after-interrupt-stream", "idle", "after-interrupt", "Esc while the reply streamed")


def s_ask_100(c: Ctx) -> None:
    c.wait_idle()
    c.shot("idle-start", "idle", "start", "fresh start at 100 columns")
    if has_ask_tool():
        ask_part(c)
    c.prompt(f"add {c.proj}/tests/test_parse.py with a smoke test")
    c.wait_text("Apply this change?")
    c.rec.settle(0.6)
    c.shot("blocked-edit", "blocked", "edit-permission", "write_file confirmation (100 columns)")
    c.key("Down")
    c.key("Enter")
    c.wait_idle()
    c.shot("idle-after-approve-always", "idle", "after-approve", "picked '2. Yes, allow always'")
    c.prompt("fix the regression in the tokenizer please")
    c.wait_text("regression test?")
    c.wait_idle()
    c.shot("idle-reply-question", "idle", "reply-question", "reply ending with a question (100 columns)")


def ask_part(c: Ctx) -> None:
    """The ask_user_question pickers (0.24.4; 0.1.4 has no question tool)."""
    c.prompt("let me choose between two designs for the cache layer first")
    c.wait_text("Esc: Cancel")
    c.rec.settle(0.6)
    c.shot("blocked-question", "blocked", "question",
           "ask_user_question call: 'AskUserQuestion' picker, '↑/↓: Navigate | Enter: Select | Esc: Cancel'")
    c.key("Down")
    c.key("Enter")
    c.wait_idle()
    c.shot("idle-after-answer", "idle", "after-reply", "picked option 2 with Down, Enter; mock answered")
    c.prompt("before touching the logger, ask me which option you should use")
    c.wait_text("Esc: Cancel")
    c.rec.settle(0.6)
    c.shot("blocked-question-2", "blocked", "question", "a second ask_user_question picker")
    c.key("Escape")
    c.wait_idle()
    c.shot("idle-after-dismiss", "idle", "after-reject", "dismissed the question with Esc")


def s_noprov_100(c: Ctx) -> None:
    """No OPENAI_* env and no auth in settings: what Qwen shows then."""
    if legacy():
        c.wait_text("How would you like to authenticate")
        c.rec.settle(1.0)
        c.shot("blocked-provider", "blocked", "provider-setup",
               "no provider env / auth in settings: 'Get started' auth dialog, '● 1. Qwen OAuth'")
        c.key("Down")
        c.rec.settle(0.5)
        c.shot("blocked-provider-openai", "blocked", "provider-setup",
               "the same auth dialog with '● 2. OpenAI' selected (Down)")
        c.key("Enter")
        c.wait_text("OpenAI Configuration Required")
        c.rec.settle(1.0)
        c.shot("blocked-openai-config", "blocked", "provider-setup",
               "Enter on OpenAI: 'OpenAI Configuration Required' key / base URL / model form")
        return
    time.sleep(8)
    c.rec.settle(1.0)
    c.shot("blocked-provider", "blocked", "provider-setup",
           "no provider env / settings: the provider-connection screen")


def s_trust(c: Ctx) -> None:
    """0.1.4 with security.folderTrust.enabled: the folder trust dialog first."""
    c.wait_text("Do you trust this folder?")
    c.rec.settle(1.0)
    c.shot("blocked-trust", "blocked", "trust",
           "folderTrust enabled, first start in the folder: 'Do you trust this folder?' dialog")
    c.key("Enter")
    c.wait_idle()
    c.shot("idle-after-trust", "idle", "after-approve", "trusted the folder with Enter: logo, empty composer")


SESSIONS = [
    Session("first-80", 24, 80, project="webshop", run=s_first_80),
    Session("big-160", 48, 160, project="cache-service", run=s_big_160),
    Session("mid-120", 36, 120, project="ledger", run=s_mid_120),
    Session("ask-100", 30, 100, project="tokenizer", run=s_ask_100),
    Session("noprov-100", 30, 100, project="scratchpad", provider=False, run=s_noprov_100),
    Session("trust-80", 24, 80, project="inventory", trust=True, legacy_only=True, run=s_trust),
    Session("trust-120", 36, 120, project="billing", trust=True, legacy_only=True, run=s_trust),
]


# ----------------------------------------------------------------------------------------------
def make_dirs(sess: Session, home: Path, proj: Path) -> None:
    qdir = home / ".qwen"
    qdir.mkdir(parents=True)
    proj.mkdir(parents=True)
    (proj / "main.py").write_text("def main():\n    for i in range(10 - 1):\n        print(i)\n")
    (proj / "README.md").write_text("# demo\n")
    subprocess.run(["git", "init", "-q"], cwd=proj, check=True)
    if legacy():
        # 0.1.4's settings schema (Gemini CLI era): no enableAutoUpdate / follow-up suggestions /
        # managed memory; the update check still runs, disableUpdateNag keeps its box off the
        # screen. With OPENAI_* env but no selectedType it still opens the auth dialog.
        settings = {"general": {"disableAutoUpdate": True, "disableUpdateNag": True},
                    "privacy": {"usageStatisticsEnabled": False},
                    "tools": {"useRipgrep": False}}
        if sess.provider:
            settings["security"] = {"auth": {"selectedType": "openai"}}
        if sess.trust:
            settings.setdefault("security", {})["folderTrust"] = {"enabled": True}
    else:
        settings = {"general": {"enableAutoUpdate": False},
                    "ui": {"enableFollowupSuggestions": False},
                    "privacy": {"usageStatisticsEnabled": False},
                    "memory": {"enableManagedAutoMemory": False, "enableManagedAutoDream": False,
                               "enableAutoSkill": False},
                    "tools": {"useRipgrep": False}}
    (qdir / "settings.json").write_text(json.dumps(settings, indent=2))


def run_session(sess: Session, mock: common.Mock, only: str | None, index: dict) -> list[str]:
    base = AGENTS / f"qwen-run-{common.stamp(sess)}"
    home = base / "home"
    proj = base / sess.project
    make_dirs(sess, home, proj)
    env = {"HOME": str(home), **common.tmux_env()}
    if legacy():
        # 0.1.4 asks the npm registry for a newer release at every start (update-notifier, not
        # switched off by any setting): point it at a closed local port so it stays on the machine
        env["npm_config_registry"] = "http://127.0.0.1:9/"
    if sess.provider:
        env.update({"OPENAI_BASE_URL": f"http://127.0.0.1:{mock.port}/v1",
                    "OPENAI_API_KEY": "sk-mock-not-a-real-key", "OPENAI_MODEL": "mock-model"})
    return common.run_session(sess, lambda rec: Ctx(sess, rec, proj, only, index), sess.run,
                              base=base, home=home, cmd=[str(QWEN_BIN), "--approval-mode", "default"],
                              env=env, cwd=proj)


def capture(only: str | None) -> None:
    sessions = [s for s in SESSIONS if legacy() or not s.legacy_only]
    common.capture(only, agent="qwen", sessions=sessions, out=OUT, bin_=QWEN_BIN, install=install,
                   run=run_session,
                   start_mock=lambda log: common.Mock("mock_openai.py", log, slow=20, delay=20),
                   title="# Real Qwen Code captures; written by harness/qwen.py (do not edit by hand).")


def main() -> None:
    common.main(__doc__, install=install, capture=capture, sessions=SESSIONS, configure=configure,
                describe=lambda s: f"{s.name:12s} {s.cols}x{s.rows} provider={s.provider}")


if __name__ == "__main__":
    main()
