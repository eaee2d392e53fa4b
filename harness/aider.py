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
from common import AGENTS, ByRelease, Idle, Keys, Prompt, Shot, Sleep, Type, WaitText, Working, send  # noqa: E402


class AiderRelease(common.PipRelease):
    def install(self) -> None:
        if self.bin.exists():
            out = subprocess.run([str(self.bin), "--version"], capture_output=True, text=True).stdout
            if self.version in out:
                print(f"already installed: {out.strip()} in {self.prefix}")
                return
        # aider-chat 0.86 wants Python >=3.10,<3.13 (0.67 >=3.9,<3.13): use this interpreter (3.11
        # here). Each release pins its dependencies exactly; the oldest whose pins all install from
        # this machine's index is 0.67.0 (older ones pin litellm 1.43-1.52, which it lacks).
        subprocess.run([sys.executable, "-m", "venv", str(self.prefix)], check=True)
        subprocess.run([str(self.prefix / "bin" / "pip"), "install", "-q", f"aider-chat=={self.version}"], check=True)
        print(subprocess.run([str(self.bin), "--version"], capture_output=True, text=True).stdout)


AIDER = AiderRelease("aider", "aider-chat", "aider", pinned="0.86.2")
older_than = AIDER.older_than
MODEL = "openai/mock-model"
PROMPT_RE = re.compile(r"^([a-z]+( multi)?)?>( |$)")          # Aider's input prompt: "> ", "diff> ", "ask> "
QUESTION_RE = re.compile(r"\]: ?\S*\s*$")                  # the tail of "… (Y)es/(N)o [Yes]: "
SPINNER_RE = re.compile(r"[░█#=]{2}\s+Waiting for ")


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
    project: str = "proj"


class Ctx(common.Ctx):
    """Wait predicates get (cursor row text, cursor visible, whole screen). Idle is Aider's
    input prompt (`wait_prompt`), a dialog a `… [Yes]:` question (`wait_question`)."""

    release = AIDER
    settle = 0.5
    columns = (45, 24, 7)
    is_idle = staticmethod(lambda r, v, s: v and PROMPT_RE.match(r) is not None)
    idle_what, idle_settle = "input prompt", 0.6

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

    def wait_prompt(self, timeout: float | None = None) -> str:
        """Idle: the cursor sits on Aider's input prompt row and the output went quiet."""
        return self.wait_idle(timeout)

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

    def wait_working(self, timeout: float | None = None) -> str:
        """Working, first token not there yet: the scanner where the release has one; else
        (0.80.4 and older) the submitted prompt with the cursor off any prompt/question row."""
        timeout = timeout or 20
        if has_waiting_spinner():
            return self.wait(lambda r, v, s: bool(SPINNER_RE.search(s)), "waiting spinner", timeout)
        return self.wait(lambda r, v, s: not PROMPT_RE.match(r) and not QUESTION_RE.search(r),
                         "cursor off the prompt (no waiting indicator in this release)", timeout)

    wait_waiting = wait_working

    def answer(self, keys: str) -> None:
        if keys:
            self.rec.send(keys, literal=True)
            time.sleep(0.2)
        self.rec.send("Enter")

    def detail(self, facts: dict, dest: Path) -> str:
        row, vis, _ = self.cursor()
        return f" cursor={row!r} vis={vis}"


# ----------------------------------------------------------------------------------------------
# scenario steps of Aider's own

def question(needle, suffix: str | None = None, kind: str = "", how="", answer: str | None = None) -> list:
    """A `… [Yes]:` question: wait for it (`needle`: its text, or a function of the Ctx), shoot it
    (with a suffix), answer it (`answer`: the keys typed before Enter; None: leave it up)."""
    steps: list = [lambda c: c.wait_question(needle(c) if callable(needle) else needle)]
    if suffix:
        steps.append(Shot(suffix, kind, how))
    if answer is not None:
        steps.append(lambda c: c.answer(answer))
    return steps


def raw(*ks: str):
    """Keys sent in one tmux send-keys (Escape Enter: Alt-Enter)."""
    return lambda c: c.rec.send(*ks)


def spinner_how(yes: str, no: str):
    return lambda c: yes if has_waiting_spinner() else no


# ----------------------------------------------------------------------------------------------
# session scripts

NO_SPINNER = ("mock holds the first token; this release has no waiting indicator: the submitted "
              "prompt and an empty row with the cursor")

FIRST_80 = [  # 80x24, no git repo, model warnings on: git-init and docs-URL questions, then a tour
    question("No git repo found", "blocked-git-init", "git-init",
             "no .git in the folder: 'No git repo found, create one …? (Y)es/(N)o [Yes]:' (wraps at 80)", ""),
    question("Open documentation url", "blocked-open-docs-url", "open-url",
             "unknown model: warning, then 'Open documentation url for more info? … [Yes]:'", "n"),
    Idle("idle-start", "start", "answered the start-up questions; empty 'diff>' prompt"),
    Prompt("the date parser has a bug with leap years, please fix it", wait="regression test?"),
    Idle("idle-reply-question", "reply-question",
         "reply ending 'Would you like me to add a regression test?'; back at the prompt"),
    Prompt("please run `sleep 7 && ls -la` now"),
    question("Run shell command?", "blocked-run-command", "run-command",
             "mock replies with a fenced bash block: 'Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]:'", ""),
    WaitText("Running sleep 7"),
    Working("working-command-running", "tool-running",
            "approved with Enter; `sleep 7 && ls -la` runs (no indicator; cursor on an empty row)",
            delay=2.5, wait=False),
    question("Add command output to the chat?", "blocked-add-output", "add-output",
             "command finished: 'Add command output to the chat? … [Yes]:' below the answered one", "n"),
    Idle("idle-after-reject-output", "after-reject", "answered n to adding the command output; back at the prompt"),
    Prompt("please edit main.py to print a header first"),
    question("Allow edits to file that has not been added to the chat?", "blocked-allow-edit", "allow-edit",
             "SEARCH/REPLACE for a repo file not in the chat: 'Allow edits to file … [Yes]:' (wraps at 80)", "n"),
    Idle("idle-after-reject-edit", "after-reject", "answered n to the edit permission"),
    Prompt("create src/report_utils.py with a formatter"),
    question("Create new file?", "blocked-create-file", "create-file",
             "SEARCH/REPLACE block for a new file: 'Create new file? (Y)es/(N)o [Yes]:'", "y"),
    Idle("idle-after-approve-create", "after-approve",
         "approved; file written and auto-committed (mock answers the commit-message call)"),
    Prompt("take your time and think about the cache layout"),
    Working("working-before-first-token", "waiting-first-token",
            spinner_how("mock holds the first token; scanner bar '█░  Waiting for openai/mock-model'", NO_SPINNER),
            delay=2),
    send("C-c"),
    Idle("idle-after-interrupt-waiting", "after-interrupt", "Ctrl-C while waiting for the first token"),
]

BIG_160 = [  # 160x48, committed repo without .gitignore: gitignore question, file mention, streaming
    question("to .gitignore", "blocked-gitignore", "gitignore",
             "git repo without .aider* ignored: 'Add .aider* to .gitignore (recommended)? (Y)es/(N)o [Yes]:'", "y"),
    Idle("idle-start", "start", "fresh start after the .gitignore question; 'diff>' prompt"),
    Prompt("where is the settings loader? look at config/settings.py please"),
    question(lambda c: add_file_question("config/settings.py"), "blocked-add-file", "add-file",
             lambda c: f"reply names a tracked file not in the chat: '{add_file_question('config/settings.py')} … [Yes]:'",
             "y"),
    Idle("idle-after-add-file", "after-approve", "added the file; prompt now lists it above 'diff>'"),
    Prompt("walk me through the scheduler slowly", wait="careful walk-through"),
    Working("working-streaming", "streaming",
            "slow streamed reply, 4 s in: text only, cursor hidden on the live text", delay=4, wait=False),
    Working("working-streaming-late", "streaming", "same reply 10 s in", delay=6, wait=False),
    Idle("idle-after-reply", "after-reply", "the slow reply finished; prompt back"),
    Prompt("run `sleep 9; echo build finished` please"),
    question("Run shell command?", "blocked-run-command", "run-command",
             "shell command question at 160 columns, after earlier answered questions", "y"),
    WaitText("Running sleep 9"),
    Working("working-command-running", "tool-running", "approved with y; the 9 s command runs", delay=4, wait=False),
    question("Add command output to the chat?", answer="y"),
    Idle("idle-after-approve-output", "after-approve", "added the command output to the chat ('Added N lines of output')"),
    Prompt("there's an off-by-one in the pager, can you fix it", wait="regression test?"),
    Idle("idle-reply-question", "reply-question", "reply ending with a question (160 columns)"),
    Prompt("explain the token refresh flow in detail", wait="careful walk-through"),
    Sleep(3),
    send("C-c"),
    Idle("idle-after-interrupt-stream", "after-interrupt", "Ctrl-C while the reply streamed"),
    Prompt("please ponder whether the API needs pagination"),
    Working("working-before-first-token", "waiting-first-token",
            spinner_how("scanner bar 5 s into the wait (160 columns)", NO_SPINNER + " (160 columns, 5 s in)"), delay=5),
    send("C-c"),
    Idle(),
]

MID_100 = [  # 100x30, diff is the model's default format (plain '> ' prompt): URL and rejections
    Idle("idle-start", "start", "model settings make diff the default: plain '> ' prompt"),
    Prompt("the spec is at https://example.com/docs/api-v2.html so follow it"),
    question("Add URL to the chat?", "blocked-add-url", "add-url",
             "prompt contains a URL: 'Add URL to the chat? (Y)es/(N)o/(D)on't ask again [Yes]:'", "n"),
    Idle("idle-after-reject-url", "after-reject", "answered n to the URL; short reply"),
    Prompt("execute `git log --oneline | head -3` for me"),
    question("Run shell command?", "blocked-run-command", "run-command", "shell command question (100 columns)", "n"),
    Idle("idle-after-reject-command", "after-reject", "answered n to running the command"),
    Prompt("write tests/test_parser.py covering the edge cases"),
    question("Create new file?"),
    Type("y"),
    Shot("blocked-create-file-typed", "create-file", "'Create new file? … [Yes]: y' typed but Enter not pressed yet"),
    send("Enter"),
    Idle(),
    Prompt("take your time and deliberate on the storage format"),
    Working("working-before-first-token", "waiting-first-token",
            spinner_how("scanner bar with a plain '> ' prompt above (100 columns)",
                        NO_SPINNER + " (plain '> ' prompt, 100 columns)"), delay=1.5),
    Idle("idle-after-delayed-reply", "after-reply", "the delayed reply arrived and finished", timeout=60),
]


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


def wait_row(pred: Callable[[str, bool], bool], what: str):
    return lambda c: c.wait(lambda r, v, s: pred(r, v), what, 10)


DRAFT = [Type("refactor the exporter so that it streams rows"),
         Shot("idle-draft-input", "draft", "a draft typed at the prompt, not submitted"),
         Keys(("C-u",), pause=0.3)]

MULTI_120 = [  # 120x36, --multiline (prompt 'diff multi>', Alt-Enter submits): draft, Ctrl-C in a command
    Idle("idle-start-multiline", "start", "--multiline: prompt reads 'diff multi>'"),
    DRAFT,
    Type("please run `sleep 15 && du -sh .` for me", 0.4),
    raw("Escape", "Enter"),        # Alt-Enter submits in multiline mode
    question("Run shell command?", "blocked-run-command", "run-command",
             "shell command question (120 columns, multiline mode)"),
    multi_120_command,
]

MULTI_120_BRACES = [
    # multi-120 for releases without --multiline (0.67.0, 0.68.0): a '{' line opens a multi-line
    # block (continuation prompt '. '), a '}' line sends it
    Idle("idle-start-multiline", "start",
         "no --multiline in this release: plain 'diff>' prompt (multi-line input is a '{' … '}' block)"),
    DRAFT,
    Type("{", 0.3),
    send("Enter"),
    wait_row(lambda r, v: v and r.strip() == ".", "continuation prompt '. '"),
    Type("please run `sleep 15 && du -sh .` for me", 0.4),
    send("Enter"),
    wait_row(lambda r, v: v and r.strip() == ".", "second continuation prompt"),
    lambda c: c.rec.settle(0.5, timeout=10),
    Shot("idle-draft-multiline", "draft",
         "inside a '{' block: one line entered, the cursor on the next '. ' continuation prompt"),
    Type("}", 0.3),
    send("Enter"),
    question("Run shell command?", "blocked-run-command", "run-command",
             "shell command question (120 columns, sent as a '{' block)"),
    multi_120_command,
]

SESSIONS = [
    Session("first-80", 24, 80, git="none", gitignore=False, model_warnings=True, run=FIRST_80),
    Session("big-160", 48, 160, gitignore=False, run=BIG_160,
            files={"config/settings.py": "DEBUG = False\nTIMEOUT = 30\n"}),
    Session("mid-100", 30, 100, diff_default=True, run=MID_100),
    Session("multi-120", 36, 120, multiline=True,
            run=[ByRelease({"0.69": MULTI_120, "0.0.0": MULTI_120_BRACES})]),
]


# ----------------------------------------------------------------------------------------------
def make_dirs(d: common.Driver, sess: Session, home: Path, proj: Path, mock: common.Mock) -> None:
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


def cmd(sess: Session, proj: Path) -> list[str]:
    c = [str(AIDER.bin), "--model", MODEL, "--no-check-update", "--no-show-release-notes",
         "--analytics-disable"]
    if not sess.diff_default:
        c += ["--edit-format", "diff"]
    if not sess.model_warnings:
        c += ["--no-show-model-warnings"]
    if sess.multiline and has_multiline_flag():
        c += ["--multiline"]
    return c


class Driver(common.Driver):
    def dirs(self, sess: Session) -> tuple[Path, Path, Path]:
        tag = common.stamp(sess)
        return AGENTS / f"aider-run-{tag}", AGENTS / f"aider-home-{tag}", AGENTS / f"aider-run-{tag}" / "proj"


DRIVER = Driver(
    AIDER, "Aider", __doc__, Ctx, SESSIONS, common.openai_mock(22, 30), setup=make_dirs, cmd=cmd,
    env=lambda sess, home, proj, mock: {"HOME": str(home), "OPENAI_API_BASE": f"http://127.0.0.1:{mock.port}/v1",
                                        "OPENAI_API_KEY": "sk-mock-not-a-real-key"},
    describe=lambda s: f"{s.name:12s} {s.cols}x{s.rows} git={s.git} gitignore={s.gitignore} "
                       f"warnings={s.model_warnings} diff_default={s.diff_default}")

if __name__ == "__main__":
    DRIVER.main()
