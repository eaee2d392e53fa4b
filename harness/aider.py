#!/usr/bin/env python3
"""Capture real Aider fixtures against the mock model server.

    python harness/aider.py install                 # pinned aider-chat in its own venv under /work/agents
    python harness/aider.py capture [--only NAME]   # run the scenarios, write fixtures/aider/
    python harness/aider.py list                    # the sessions
    python harness/aider.py capture --version V     # another release: fixtures/aider/V/

Each session runs the real CLI in a private tmux server (harness/tmuxrec.py) with a throwaway
HOME and project folder under /work/agents, talking to harness/mock_openai.py (chat completions
SSE; Aider gets no tools, so the mock answers with fenced shell blocks and SEARCH/REPLACE
blocks, which Aider turns into its own `… [Yes]:` questions). The driver waits on tmux's own
screen and cursor, and snapshots the full byte prefix so far as fixtures/aider/<name>.raw
(+ .screen.txt). `--only` takes a session name or a fixture name (the whole session runs; only
matching fixtures are rewritten). index.toml is merged, not replaced.

Processes: Aider runs as the venv's python (`python3.11 …/bin/aider`). After each session the
private tmux server is killed and then, by PID, every process whose command line or environment
names the session's unique HOME (never by process name: other agents run on this machine).
"""
from __future__ import annotations

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

PINNED = "0.86.2"
VERSION = PINNED
VENV = AGENTS / f"aider-{VERSION}"
AIDER_BIN = VENV / "bin" / "aider"
OUT = REPO / "fixtures" / "aider"
MODEL = "openai/mock-model"
PROMPT_RE = re.compile(r"^([a-z]+( multi)?)?>( |$)")          # Aider's input prompt: "> ", "diff> ", "ask> "
QUESTION_RE = re.compile(r"\]: ?\S*\s*$")                  # the tail of "… (Y)es/(N)o [Yes]: "
SPINNER_RE = re.compile(r"[░█#=]{2}\s+Waiting for ")


def older_than(v: str) -> bool:
    """True when the release being driven (VERSION) is older than `v`."""
    return common.vtuple(VERSION) < common.vtuple(v)


def configure(version: str | None, out: Path | None) -> None:
    """`--version V` / `--out DIR`: point the venv, the binary and the fixture folder (here and on
    Ctx, whose attributes were bound at class definition) at release V. The pinned release keeps
    its paths (fixtures/aider/)."""
    global VERSION, VENV, AIDER_BIN, OUT
    if version:
        VERSION = version
        VENV = AGENTS / f"aider-{VERSION}"
        AIDER_BIN = VENV / "bin" / "aider"
    if out:
        OUT = out.resolve()
    elif VERSION != PINNED:
        OUT = common.release_out("aider", VERSION)
    Ctx.version, Ctx.out = VERSION, OUT


# What differs per release (each keyed on the version; the releases named are the ones looked at):
def has_multiline_flag() -> bool:
    """`--multiline` (prompt 'diff multi>', Alt-Enter submits): 0.69.1 has it, 0.67.0 and 0.68.0
    not (there a '{' line opens a multi-line block with a '. ' continuation prompt)."""
    return not older_than("0.69")


def has_waiting_spinner() -> bool:
    """The 'Waiting for <model>' scanner while the first token is awaited: 0.83.2 has it
    (aider/waiting.py), 0.80.4 and older not (the screen just stays at the submitted prompt)."""
    return not older_than("0.83")


def add_file_question(fname: str) -> str:
    """The question for a file named in a reply: 'Add file to the chat?' (file as the subject
    above it) since 0.75.2; 0.72.3 and older ask 'Add <file> to the chat?'."""
    return f"Add {fname} to the chat?" if older_than("0.75") else "Add file to the chat?"


def install() -> None:
    if AIDER_BIN.exists():
        out = subprocess.run([str(AIDER_BIN), "--version"], capture_output=True, text=True).stdout
        if VERSION in out:
            print(f"already installed: {out.strip()} in {VENV}")
            return
    # aider-chat 0.86 wants Python >=3.10,<3.13 (0.67 >=3.9,<3.13): use this interpreter (3.11
    # here). Each release pins its dependencies exactly; the oldest whose pins all install from
    # this machine's index is 0.67.0 (older ones pin litellm 1.43-1.52, which it lacks).
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    subprocess.run([str(VENV / "bin" / "pip"), "install", "-q", f"aider-chat=={VERSION}"], check=True)
    print(subprocess.run([str(AIDER_BIN), "--version"], capture_output=True, text=True).stdout)


@dataclass
class Session:
    name: str
    rows: int
    cols: int
    git: str = "committed"        # "none" (Aider offers git init) | "committed" (files committed)
    gitignore: bool = True        # .gitignore already lists .aider* (else Aider asks to add it)
    model_warnings: bool = False  # let Aider show the unknown-model warning + docs-URL question
    diff_default: bool = False    # model settings make diff the default format: prompt is "> "
    multiline: bool = False       # --multiline: Enter adds a line, Alt-Enter submits
    files: dict = field(default_factory=dict)
    run: Callable = None


class Ctx(common.Ctx):
    """Wait predicates get (cursor row text, cursor visible, whole screen)."""

    agent, version, out = "aider", VERSION, OUT
    settle = 0.5
    columns = (45, 24, 7)

    # tmux's own view ------------------------------------------------------------------------
    def cursor(self) -> tuple[str, bool, str]:
        """(cursor row text, cursor visible, whole screen)."""
        x, y, flag = self.rec.tmux("display-message", "-p", "-t", self.rec.pane,
                                   "#{cursor_x} #{cursor_y} #{cursor_flag}").split()
        scr = self.rec.screen()
        rows = scr.split("\n")
        row = rows[int(y)] if int(y) < len(rows) else ""
        return row.rstrip(), flag == "1", scr

    def probe(self) -> tuple[tuple, str, str]:
        row, vis, scr = self.cursor()
        return (row, vis, scr), scr, f"; cursor row={row!r}"

    def wait_text(self, needle: str, timeout: float = 60) -> str:
        return self.wait(lambda r, v, s: needle in s, repr(needle), timeout)

    def wait_prompt(self, timeout: float = 90) -> str:
        """Idle: the cursor sits on Aider's input prompt row and the output went quiet."""
        scr = self.wait(lambda r, v, s: v and PROMPT_RE.match(r) is not None, "input prompt", timeout)
        self.rec.settle(0.6, timeout=10)
        return scr

    def wait_question(self, needle: str, timeout: float = 60) -> str:
        """Blocked: a `… [Yes]:` question is live (the cursor is on its last row)."""
        def ok(r, v, s):
            if not QUESTION_RE.search(r):
                return False
            rows = s.rstrip("\n").split("\n")
            tail = "\n".join(rows[-8:])
            return needle in tail.replace("\n", "") or needle in tail
        scr = self.wait(ok, f"question {needle!r}", timeout)
        self.rec.settle(0.5, timeout=10)
        return scr

    def prompt(self, text: str) -> None:
        """Type a prompt at the input row and submit it (the cursor leaves the prompt row)."""
        self.wait_prompt()
        self.rec.send(text, literal=True)   # one literal argument: ';' inside is safe
        time.sleep(0.4)
        self.rec.send("Enter")
        self.wait(lambda r, v, s: not (v and PROMPT_RE.match(r)) or text[-10:] not in r,
                  "prompt submitted", 10)

    def wait_waiting(self, timeout: float = 20) -> str:
        """Working, first token not there yet: the scanner where the release has one; else
        (0.80.4 and older) the submitted prompt with the cursor off any prompt/question row."""
        if has_waiting_spinner():
            return self.wait(lambda r, v, s: bool(SPINNER_RE.search(s)), "waiting spinner", timeout)
        return self.wait(lambda r, v, s: not PROMPT_RE.match(r) and not QUESTION_RE.search(r),
                         "cursor off the prompt (no waiting indicator in this release)", timeout)

    def answer(self, keys: str) -> None:
        if keys:
            self.rec.send(keys, literal=True)
            time.sleep(0.2)
        self.rec.send("Enter")

    def detail(self, facts: dict, dest: Path) -> str:
        row, vis, _ = self.cursor()
        return f" cursor={row!r} vis={vis}"


# ----------------------------------------------------------------------------------------------
# session scripts

NO_SPINNER = ("mock holds the first token; this release has no waiting indicator: the submitted "
              "prompt and an empty row with the cursor")

def s_first_80(c: Ctx) -> None:
    """80x24, no git repo, model warnings on: git-init and docs-URL questions, then a tour."""
    c.wait_question("No git repo found")
    c.shot("blocked-git-init", "blocked", "git-init",
           "no .git in the folder: 'No git repo found, create one …? (Y)es/(N)o [Yes]:' (wraps at 80)")
    c.answer("")
    c.wait_question("Open documentation url")
    c.shot("blocked-open-docs-url", "blocked", "open-url",
           "unknown model: warning, then 'Open documentation url for more info? … [Yes]:'")
    c.answer("n")
    c.wait_prompt()
    c.shot("idle-start", "idle", "start", "answered the start-up questions; empty 'diff>' prompt")
    c.prompt("the date parser has a bug with leap years, please fix it")
    c.wait_text("regression test?")
    c.wait_prompt()
    c.shot("idle-reply-question", "idle", "reply-question",
           "reply ending 'Would you like me to add a regression test?'; back at the prompt")
    c.prompt("please run `sleep 7 && ls -la` now")
    c.wait_question("Run shell command?")
    c.shot("blocked-run-command", "blocked", "run-command",
           "mock replies with a fenced bash block: 'Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]:'")
    c.answer("")
    c.wait_text("Running sleep 7")
    time.sleep(2.5)
    c.shot("working-command-running", "working", "tool-running",
           "approved with Enter; `sleep 7 && ls -la` runs (no indicator; cursor on an empty row)",
           settle=None)
    c.wait_question("Add command output to the chat?")
    c.shot("blocked-add-output", "blocked", "add-output",
           "command finished: 'Add command output to the chat? … [Yes]:' below the answered one")
    c.answer("n")
    c.wait_prompt()
    c.shot("idle-after-reject-output", "idle", "after-reject",
           "answered n to adding the command output; back at the prompt")
    c.prompt("please edit main.py to print a header first")
    c.wait_question("Allow edits to file that has not been added to the chat?")
    c.shot("blocked-allow-edit", "blocked", "allow-edit",
           "SEARCH/REPLACE for a repo file not in the chat: 'Allow edits to file … [Yes]:' (wraps at 80)")
    c.answer("n")
    c.wait_prompt()
    c.shot("idle-after-reject-edit", "idle", "after-reject", "answered n to the edit permission")
    c.prompt("create src/report_utils.py with a formatter")
    c.wait_question("Create new file?")
    c.shot("blocked-create-file", "blocked", "create-file",
           "SEARCH/REPLACE block for a new file: 'Create new file? (Y)es/(N)o [Yes]:'")
    c.answer("y")
    c.wait_prompt()
    c.shot("idle-after-approve-create", "idle", "after-approve",
           "approved; file written and auto-committed (mock answers the commit-message call)")
    c.prompt("take your time and think about the cache layout")
    c.wait_waiting()
    time.sleep(2)
    c.shot("working-before-first-token", "working", "waiting-first-token",
           "mock holds the first token; scanner bar '█░  Waiting for openai/mock-model'"
           if has_waiting_spinner() else NO_SPINNER, settle=None)
    c.rec.send("C-c")
    c.wait_prompt()
    c.shot("idle-after-interrupt-waiting", "idle", "after-interrupt",
           "Ctrl-C while waiting for the first token")


def s_big_160(c: Ctx) -> None:
    """160x48, committed repo without .gitignore: gitignore question, file mention, streaming."""
    c.wait_question("to .gitignore")
    c.shot("blocked-gitignore", "blocked", "gitignore",
           "git repo without .aider* ignored: 'Add .aider* to .gitignore (recommended)? (Y)es/(N)o [Yes]:'")
    c.answer("y")
    c.wait_prompt()
    c.shot("idle-start", "idle", "start", "fresh start after the .gitignore question; 'diff>' prompt")
    c.prompt("where is the settings loader? look at config/settings.py please")
    q = add_file_question("config/settings.py")
    c.wait_question(q)
    c.shot("blocked-add-file", "blocked", "add-file",
           f"reply names a tracked file not in the chat: '{q} … [Yes]:'")
    c.answer("y")
    c.wait_prompt()
    c.shot("idle-after-add-file", "idle", "after-approve",
           "added the file; prompt now lists it above 'diff>'")
    c.prompt("walk me through the scheduler slowly")
    c.wait_text("careful walk-through")
    time.sleep(4)
    c.shot("working-streaming", "working", "streaming",
           "slow streamed reply, 4 s in: text only, cursor hidden on the live text", settle=None)
    time.sleep(6)
    c.shot("working-streaming-late", "working", "streaming", "same reply 10 s in", settle=None)
    c.wait_prompt()
    c.shot("idle-after-reply", "idle", "after-reply", "the slow reply finished; prompt back")
    c.prompt("run `sleep 9; echo build finished` please")
    c.wait_question("Run shell command?")
    c.shot("blocked-run-command", "blocked", "run-command",
           "shell command question at 160 columns, after earlier answered questions")
    c.answer("y")
    c.wait_text("Running sleep 9")
    time.sleep(4)
    c.shot("working-command-running", "working", "tool-running",
           "approved with y; the 9 s command runs", settle=None)
    c.wait_question("Add command output to the chat?")
    c.answer("y")
    c.wait_prompt()
    c.shot("idle-after-approve-output", "idle", "after-approve",
           "added the command output to the chat ('Added N lines of output')")
    c.prompt("there's an off-by-one in the pager, can you fix it")
    c.wait_text("regression test?")
    c.wait_prompt()
    c.shot("idle-reply-question", "idle", "reply-question",
           "reply ending with a question (160 columns)")
    c.prompt("explain the token refresh flow in detail")
    c.wait_text("careful walk-through")
    time.sleep(3)
    c.rec.send("C-c")
    c.wait_prompt()
    c.shot("idle-after-interrupt-stream", "idle", "after-interrupt", "Ctrl-C while the reply streamed")
    c.prompt("please ponder whether the API needs pagination")
    c.wait_waiting()
    time.sleep(5)
    c.shot("working-before-first-token", "working", "waiting-first-token",
           "scanner bar 5 s into the wait (160 columns)" if has_waiting_spinner()
           else NO_SPINNER + " (160 columns, 5 s in)", settle=None)
    c.rec.send("C-c")
    c.wait_prompt()


def s_mid_100(c: Ctx) -> None:
    """100x30, diff is the model's default format (plain '> ' prompt): URL and rejections."""
    c.wait_prompt()
    c.shot("idle-start", "idle", "start", "model settings make diff the default: plain '> ' prompt")
    c.prompt("the spec is at https://example.com/docs/api-v2.html so follow it")
    c.wait_question("Add URL to the chat?")
    c.shot("blocked-add-url", "blocked", "add-url",
           "prompt contains a URL: 'Add URL to the chat? (Y)es/(N)o/(D)on't ask again [Yes]:'")
    c.answer("n")
    c.wait_prompt()
    c.shot("idle-after-reject-url", "idle", "after-reject", "answered n to the URL; short reply")
    c.prompt("execute `git log --oneline | head -3` for me")
    c.wait_question("Run shell command?")
    c.shot("blocked-run-command", "blocked", "run-command", "shell command question (100 columns)")
    c.answer("n")
    c.wait_prompt()
    c.shot("idle-after-reject-command", "idle", "after-reject", "answered n to running the command")
    c.prompt("write tests/test_parser.py covering the edge cases")
    c.wait_question("Create new file?")
    c.rec.send("y", literal=True)
    time.sleep(0.5)
    c.shot("blocked-create-file-typed", "blocked", "create-file",
           "'Create new file? … [Yes]: y' typed but Enter not pressed yet")
    c.rec.send("Enter")
    c.wait_prompt()
    c.prompt("take your time and deliberate on the storage format")
    c.wait_waiting()
    time.sleep(1.5)
    c.shot("working-before-first-token", "working", "waiting-first-token",
           "scanner bar with a plain '> ' prompt above (100 columns)" if has_waiting_spinner()
           else NO_SPINNER + " (plain '> ' prompt, 100 columns)", settle=None)
    c.wait_prompt(timeout=60)
    c.shot("idle-after-delayed-reply", "idle", "after-reply", "the delayed reply arrived and finished")


def s_multi_120(c: Ctx) -> None:
    """120x36, --multiline (prompt 'diff multi>', Alt-Enter submits): draft, Ctrl-C in a command."""
    if not has_multiline_flag():
        return s_multi_120_braces(c)
    c.wait_prompt()
    c.shot("idle-start-multiline", "idle", "start", "--multiline: prompt reads 'diff multi>'")
    c.rec.send("refactor the exporter so that it streams rows", literal=True)
    time.sleep(0.5)
    c.shot("idle-draft-input", "idle", "draft", "a draft typed at the prompt, not submitted")
    c.rec.send("C-u")
    time.sleep(0.3)
    c.rec.send("please run `sleep 15 && du -sh .` for me", literal=True)
    time.sleep(0.4)
    c.rec.send("Escape", "Enter")        # Alt-Enter submits in multiline mode
    c.wait_question("Run shell command?")
    c.shot("blocked-run-command", "blocked", "run-command", "shell command question (120 columns, multiline mode)")
    multi_120_command(c)


def multi_120_command(c: Ctx) -> None:
    """The rest of multi-120: approve the 15 s command, Ctrl-C it."""
    c.answer("y")
    c.wait_text("Running sleep 15")
    time.sleep(3)
    c.shot("working-command-running", "working", "tool-running", "the 15 s command runs", settle=None)
    c.rec.send("C-c")
    c.wait(lambda r, v, s: (v and PROMPT_RE.match(r) is not None) or bool(QUESTION_RE.search(r)),
           "prompt or question after Ctrl-C", 30)
    c.rec.settle(0.6)
    row, _, _ = c.cursor()
    if QUESTION_RE.search(row):
        c.shot("blocked-add-output-after-interrupt", "blocked", "add-output",
               "Ctrl-C during the command: Aider still offers to add its (partial) output")
        c.answer("n")
        c.wait_prompt()
    c.shot("idle-after-interrupt-command", "idle", "after-interrupt", "Ctrl-C while the command ran")


def s_multi_120_braces(c: Ctx) -> None:
    """multi-120 for releases without --multiline (0.67.0, 0.68.0): a '{' line opens a multi-line
    block (continuation prompt '. '), a '}' line sends it."""
    c.wait_prompt()
    c.shot("idle-start-multiline", "idle", "start",
           "no --multiline in this release: plain 'diff>' prompt (multi-line input is a '{' … '}' block)")
    c.rec.send("refactor the exporter so that it streams rows", literal=True)
    time.sleep(0.5)
    c.shot("idle-draft-input", "idle", "draft", "a draft typed at the prompt, not submitted")
    c.rec.send("C-u")
    time.sleep(0.3)
    c.rec.send("{", literal=True)
    time.sleep(0.3)
    c.rec.send("Enter")
    c.wait(lambda r, v, s: v and r.strip() == ".", "continuation prompt '. '", 10)
    c.rec.send("please run `sleep 15 && du -sh .` for me", literal=True)
    time.sleep(0.4)
    c.rec.send("Enter")
    c.wait(lambda r, v, s: v and r.strip() == ".", "second continuation prompt", 10)
    c.rec.settle(0.5, timeout=10)
    c.shot("idle-draft-multiline", "idle", "draft",
           "inside a '{' block: one line entered, the cursor on the next '. ' continuation prompt")
    c.rec.send("}", literal=True)
    time.sleep(0.3)
    c.rec.send("Enter")
    c.wait_question("Run shell command?")
    c.shot("blocked-run-command", "blocked", "run-command", "shell command question (120 columns, sent as a '{' block)")
    multi_120_command(c)


SESSIONS = [
    Session("first-80", 24, 80, git="none", gitignore=False, model_warnings=True, run=s_first_80),
    Session("big-160", 48, 160, gitignore=False, run=s_big_160,
            files={"config/settings.py": "DEBUG = False\nTIMEOUT = 30\n"}),
    Session("mid-100", 30, 100, diff_default=True, run=s_mid_100),
    Session("multi-120", 36, 120, multiline=True, run=s_multi_120),
]


# ----------------------------------------------------------------------------------------------
def make_dirs(sess: Session, home: Path, proj: Path) -> None:
    home.mkdir(parents=True)
    proj.mkdir(parents=True)
    (proj / "main.py").write_text("def main():\n    for i in range(10 - 1):\n        print(i)\n")
    for rel, text in sess.files.items():
        (proj / rel).parent.mkdir(parents=True, exist_ok=True)
        (proj / rel).write_text(text)
    if sess.gitignore:
        # 0.72.3 and older (seen 0.67.0) want .env ignored as well, .env file or not ("Add .env to
        # .gitignore (recommended)?"); 0.75.2 and newer only when a .env exists
        (proj / ".gitignore").write_text(".aider*\n.env\n" if older_than("0.75") else ".aider*\n")
    if sess.git != "none":
        git = ["git", "-c", "user.name=Fixture", "-c", "user.email=fixture@example.invalid"]
        subprocess.run(["git", "init", "-q"], cwd=proj, check=True)
        subprocess.run(git + ["add", "."], cwd=proj, check=True)
        subprocess.run(git + ["commit", "-qm", "initial"], cwd=proj, check=True)
    (home / ".gitconfig").write_text("[user]\n\tname = Fixture\n\temail = fixture@example.invalid\n")
    if sess.diff_default:
        (home / ".aider.model.settings.yml").write_text(f"- name: {MODEL}\n  edit_format: diff\n")


def run_session(sess: Session, mock: common.Mock, only: str | None, index: dict) -> list[str]:
    tag = common.stamp(sess)
    base = AGENTS / f"aider-run-{tag}"
    home = AGENTS / f"aider-home-{tag}"
    proj = base / "proj"
    make_dirs(sess, home, proj)
    env = {"HOME": str(home), "OPENAI_API_BASE": f"http://127.0.0.1:{mock.port}/v1",
           "OPENAI_API_KEY": "sk-mock-not-a-real-key", **common.tmux_env()}
    cmd = [str(AIDER_BIN), "--model", MODEL, "--no-check-update", "--no-show-release-notes",
           "--analytics-disable"]
    if not sess.diff_default:
        cmd += ["--edit-format", "diff"]
    if not sess.model_warnings:
        cmd += ["--no-show-model-warnings"]
    if sess.multiline and has_multiline_flag():
        cmd += ["--multiline"]
    return common.run_session(sess, lambda rec: Ctx(sess, rec, only, index), sess.run, base=base,
                              home=home, cmd=cmd, env=env, cwd=proj)


def capture(only: str | None) -> None:
    common.capture(only, agent="aider", sessions=SESSIONS, out=OUT, bin_=AIDER_BIN, install=install,
                   run=run_session,
                   start_mock=lambda log: common.Mock("mock_openai.py", log, slow=22, delay=30),
                   title="# Real Aider captures; written by harness/aider.py (do not edit by hand).")


def main() -> None:
    common.main(__doc__, install=install, capture=capture, sessions=SESSIONS,
                describe=lambda s: f"{s.name:12s} {s.cols}x{s.rows} git={s.git} gitignore={s.gitignore} "
                                   f"warnings={s.model_warnings} diff_default={s.diff_default}",
                configure=configure)


if __name__ == "__main__":
    main()