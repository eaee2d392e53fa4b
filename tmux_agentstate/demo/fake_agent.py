"""A fake coding agent that draws like Claude Code, for the `demo` command, benchmarks and tests.

    python -m tmux_agentstate.demo.fake_agent [--autopilot] [--seed N] [--speed F] [--tasks N] [--alt]

It copies the terminal habits that make Claude Code hard to read from outside:
- no `\\n` byte, ever: each row starts with `\\r` (+ `CSI n C` indent) + cursor-down `CSI 1 B`
  (`CSI 1 S`, scroll up, when the cursor is already on the bottom row), and the words of a row
  are placed with `CSI n G`, so the gap between two words is an untouched cell;
- Ink-style rendering: finished output ("static") is written once; the live part at the bottom
  (spinner, input box, permission dialog) is erased with cursor-up + `CSI J` and redrawn;
- a spinner row `✻ Pondering… (3s · esc to interrupt)` redrawn with `\\r` about 10 times a
  second (one ~70-byte write per frame) above the input box and its `? for shortcuts` footer;
- tool calls that print nothing at all while they run (0.5-6 s);
- a permission dialog in Claude's words (`Bash command`, `Do you want to proceed?`,
  `❯ 1. Yes`, …, footer `Esc to cancel · Tab to amend`), erased once answered;
- replies that sometimes end with "Would you like me to add a regression test?", a question in
  an ordinary reply that stays on screen into the next task (not a prompt);
- the title `OSC 0 ✳ Claude Code` once at start.

Modes: interactive (keys from the tty in raw mode: at the idle prompt type a task + Enter; at a
permission dialog `1`/Enter approves, `2` approves "always", `3`/Esc rejects, ↑/↓ move the
selection; Esc or Ctrl-C while working interrupts; Ctrl-C or Ctrl-D at an empty prompt quits)
and `--autopilot`, where it plays the user itself: it answers a dialog 3-8 s after it appears
and types the next task 3-10 s after a turn ends. `--speed F` divides every delay by F.

Ground truth for benchmarks: with `AGENTSTATE_TRUTH_FILE=<path>` it appends
`<unix time, ms> <working|idle|blocked>` every time its true state changes, right after the bytes
that draw that state were written to the terminal. With `AGENTSTATE_TRACE_FILE=<path>` it also
appends `<unix time> <bytes written so far> <state> <what>` after every single write, so a
recording of its output can be cut at exactly the points where the screen is complete.

SIGTERM, SIGHUP, SIGINT and a vanished terminal end it cleanly (the tty modes are restored);
SIGWINCH redraws at the new size.
"""
from __future__ import annotations

import argparse
import errno
import os
import random
import select
import signal
import struct
import sys
import time
import unicodedata

try:  # POSIX only; without them it still runs (no raw keys, no size queries)
    import fcntl
    import termios
except ImportError:  # pragma: no cover
    fcntl = termios = None

STATES = ("working", "idle", "blocked")
TITLE = "✳ Claude Code"
GLYPHS = "·✢✳✶✻✽✻✶✳✢"
VERBS = ["Pondering", "Thinking", "Cogitating", "Noodling", "Percolating", "Brewing", "Musing",
         "Simmering", "Crunching", "Deliberating", "Conjuring", "Tinkering", "Whirring"]

SGR = {
    None: "", "plain": "",
    "dim": "\x1b[2m",
    "accent": "\x1b[38;2;215;119;87m",
    "box": "\x1b[38;2;136;136;136m",
    "user": "\x1b[38;2;153;153;153m",
    "blue": "\x1b[38;2;177;185;249m",
    "bold": "\x1b[1m",
    "ok": "\x1b[38;2;78;186;101m",
    "err": "\x1b[38;2;255;107;128m",
}
RESET = "\x1b[0m"
BOXED = {"box", "blue"}  # styles whose rows are clipped, never re-wrapped

TASKS = [
    "fix the flaky login test", "add a --json flag to the export command",
    "why does the build fail on CI?", "rename UserStore to AccountStore everywhere",
    "make the retry backoff exponential", "add type hints to utils/dates.py",
    "clean up the warnings in the test output", "bump the minimum Python version to 3.10",
    "write a migration for the new orders.status column", "speed up the slow search query",
    "add a healthcheck endpoint", "find where the session cookie gets dropped",
]
SENTENCES = [
    "I'll start by looking at how the module is laid out.",
    "The failure comes from a race between the cache refresh and the first request.",
    "There are two call sites that still use the old name.",
    "The retry loop sleeps a fixed second, which explains the timeouts under load.",
    "I checked the fixtures and they still match the schema.",
    "This change keeps the public API the same, so no callers need updating.",
    "The test was relying on dictionary order, which is why it only failed sometimes.",
    "I moved the parsing into its own function so it can be tested on its own.",
    "Nothing else in the repository depends on this behaviour.",
    "The query was scanning the whole table because the index covered the wrong column.",
    "I kept the change small and left a comment where the edge case is handled.",
    "All the existing tests pass with the fix in place.",
]
QUESTIONS = ["Would you like me to add a regression test?",
             "Would you like me to open a pull request with this change?",
             "Should I also update the changelog?"]
SILENT_TOOLS = [
    ("Read", "src/auth/session.py", "Read 142 lines"),
    ("Search", 'pattern: "retry", path: "src"', "Found 7 files"),
    ("Bash", "git status --short", "M src/auth/session.py"),
    ("Update", "src/auth/session.py", "Updated src/auth/session.py with 4 additions and 1 removal"),
    ("Bash", "python -m pytest -q tests/test_session.py", "14 passed in 3.21s"),
    ("Read", "package.json", "Read 58 lines"),
    ("List", "src/exporters", "Listed 9 paths"),
]
ASK_TOOLS = [
    ("mkdir -p build && touch build/out.txt", "Create the build output directory", "(No content)"),
    ("npm install --save-dev vitest", "Install vitest as a dev dependency", "added 38 packages in 4s"),
    ("rm -rf dist && npm run build", "Clean rebuild of the bundle", "built in 2.41s"),
    ("python -m pytest -x tests/test_auth.py", "Run the auth tests", "9 passed in 1.02s"),
    ("git stash && git pull --rebase", "Update the branch from origin", "Successfully rebased"),
    ("curl -s http://localhost:8000/health", "Check the health endpoint", '{"status": "ok"}'),
]
LOOKS = ("current", "classic")
OPTIONS = ["Yes", "Yes, and don't ask again for this command",
           "No, and tell Claude what to do differently (esc)"]


# -- text measuring ---------------------------------------------------------------------------------
def char_width(ch: str) -> int:
    if unicodedata.combining(ch) or ch in "\u200b\u200c\u200d\ufe0f":
        return 0
    if ord(ch) < 32 or 0x7f <= ord(ch) < 0xa0:
        return 0
    return 2 if unicodedata.east_asian_width(ch) in "WF" else 1


def text_width(s: str) -> int:
    return sum(char_width(c) for c in s)


def clip(s: str, width: int) -> str:
    """The longest prefix of `s` that fits in `width` cells."""
    out, w = [], 0
    for c in s:
        cw = char_width(c)
        if w + cw > width:
            break
        out.append(c)
        w += cw
    return "".join(out)


def clip_tail(s: str, width: int) -> str:
    """The longest suffix of `s` that fits in `width` cells (an input line scrolls left)."""
    out, w = [], 0
    for c in reversed(s):
        cw = char_width(c)
        if w + cw > width:
            break
        out.append(c)
        w += cw
    return "".join(reversed(out))


def pad(s: str, width: int) -> str:
    s = clip(s, width)
    return s + " " * (width - text_width(s))


def wrap(text: str, width: int, indent: str | None = None) -> list[str]:
    """Word-wrap to `width` cells; continuation rows get `indent` (default: the text's own)."""
    width = max(1, width)
    if text_width(text) <= width:
        return [text]
    lead = text[: len(text) - len(text.lstrip(" "))]
    if indent is None:
        indent = lead if not text.startswith(("⏺ ", "● ", "> ", "❯ ")) else "  "
    if text_width(indent) >= width:
        indent = ""
    rows, cur = [], lead
    for word in text.split():
        while text_width(word) > width - text_width(indent or ""):  # a word longer than a row
            room = width - text_width(cur) - (1 if cur.strip() else 0)
            if room <= 0:
                rows.append(cur)
                cur = indent
                continue
            head = clip(word, room)
            if not head:
                break
            cur = (cur + " " + head) if cur.strip() else cur + head
            rows.append(cur)
            cur, word = indent, word[len(head):]
        if not word:
            continue
        cand = (cur + " " + word) if cur.strip() else cur + word
        if text_width(cand) <= width:
            cur = cand
        else:
            rows.append(cur)
            cur = indent + word
    if cur.strip() or not rows:
        rows.append(cur)
    return rows


def words_at(text: str) -> list[tuple[int, str]]:
    """The runs of non-blank characters of a row and the column (0-based cell) each starts at."""
    out, col, cur, start = [], 0, [], 0
    for c in text:
        if c == " ":
            if cur:
                out.append((start, "".join(cur)))
                cur = []
            col += 1
            continue
        if not cur:
            start = col
        cur.append(c)
        col += char_width(c)
    if cur:
        out.append((start, "".join(cur)))
    return out


# -- the agent --------------------------------------------------------------------------------------
class Quit(Exception):
    pass


class FakeAgent:
    def __init__(self, *, autopilot: bool = False, seed: int | None = None, speed: float = 1.0,
                 tasks: int = 0, alt: bool = False, look: str = "current", in_fd: int | None = 0, out_fd: int = 1,
                 truth_path: str | None = None, trace_path: str | None = None):
        if seed is None:
            seed = int.from_bytes(os.urandom(4), "big")
        self.rng = random.Random(f"agent-{seed}")      # what the agent does
        self.user_rng = random.Random(f"user-{seed}")  # what the autopilot user does
        self.autopilot = autopilot
        self.speed = speed if speed > 0 else 1.0
        self.max_tasks = max(0, tasks)
        self.alt = alt
        self.look = look if look in LOOKS else "current"
        self.in_fd = in_fd
        self.out_fd = out_fd
        self.truth_path = truth_path
        self.trace_path = trace_path
        self.rows, self.cols = 24, 80
        # screen model
        self.y = 0            # cursor row
        self.fresh = True     # cursor at column 0 of an empty row: the next row is written here
        self.dyn_count = 0    # rows of the live region now on screen (cursor on its last row)
        self.dyn_builder = None
        self.static: list[tuple[str, str | None]] = []  # logical lines, for a redraw on resize
        # agent state
        self.state: str | None = None
        self.written = 0
        self.mode = "idle"    # idle | task | ask
        self.task = None      # the running task generator
        self.wake: float | None = None
        self.spinning = False
        self.spin_next = 0.0
        self.spin_frame = 0
        self.spin_start = 0.0
        self.verb = "Pondering"
        self.input = ""
        self.partial = ""     # reply text being streamed (live region)
        self.tool_live: list[tuple[str, str | None]] = []  # tool rows shown while it runs
        self.ask: dict | None = None
        self.tasks_started = 0
        # autopilot
        self.ap_at: float | None = None
        self.ap_typing: str | None = None
        # plumbing
        self.quit = False
        self.winch = False
        self.saved_tty = None
        self.wake_r = self.wake_w = None
        self.esc_pending = b""

    # -- delays ------------------------------------------------------------------------------------
    def d(self, seconds: float) -> float:
        return seconds / self.speed

    @property
    def spin_interval(self) -> float:
        return max(0.02, self.d(0.1))

    # -- output ------------------------------------------------------------------------------------
    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                n = os.write(self.out_fd, view)
            except InterruptedError:
                continue
            except BlockingIOError:
                select.select([], [self.out_fd], [], 1.0)
                continue
            except OSError as e:  # EIO / EPIPE: the terminal is gone
                self.quit = True
                raise Quit() from e
            view = view[n:]
            self.written += n

    def emit(self, text: str, what: str, state: str | None = None) -> None:
        """Write one frame; then, if `state` differs, record the new true state."""
        if text:
            self._write_all(text.encode("utf-8", "replace"))
        now = time.time()
        if state is not None and state != self.state:
            self.state = state
            self._append(self.truth_path, f"{now:.3f} {state}\n")
        if text or state is not None:
            self._append(self.trace_path, f"{now:.3f} {self.written} {self.state} {what}\n")

    @staticmethod
    def _append(path: str | None, line: str) -> None:
        if not path:
            return
        try:
            with open(path, "a", encoding="utf-8") as f:
                f.write(line)
        except OSError:
            pass

    # -- the screen model --------------------------------------------------------------------------
    def _row(self, text: str, style: str | None) -> str:
        """Bytes that put `text` on the next row: CR, indent, down (or scroll), words by CSI G."""
        text = clip(text, max(1, self.cols - 1))
        out = []
        indent = len(text) - len(text.lstrip(" "))
        if self.fresh:
            self.fresh = False
            if indent:
                out.append(f"\x1b[{indent}C")
        else:
            out.append("\r")
            if indent:
                out.append(f"\x1b[{indent}C")
            if self.y < self.rows - 1:
                out.append("\x1b[1B")
                self.y += 1
            else:
                out.append("\x1b[1S")  # bottom row: scroll up one (the top row goes to history)
        words = words_at(text)
        if words:
            out.append(SGR.get(style, ""))
            for i, (col, word) in enumerate(words):
                out.append(word if i == 0 else f"\x1b[{col + 1}G{word}")
            if SGR.get(style):
                out.append(RESET)
        return "".join(out)

    def _erase(self) -> str:
        """Cursor-up to the first row of the live region + erase to the end of the screen."""
        if self.dyn_count <= 0:
            return ""
        up = min(self.dyn_count - 1, self.y)
        self.y -= up
        self.dyn_count = 0
        self.fresh = True
        return "\r" + (f"\x1b[{up}A" if up else "") + "\x1b[J"

    def _static_rows(self, text: str, style: str | None) -> list[str]:
        width = max(1, self.cols - 1)
        if style in BOXED or text_width(text) <= width:
            return [text]
        return wrap(text, width)

    def _live_rows(self) -> list[tuple[str, str | None, str | None]]:
        rows = self.dyn_builder() if self.dyn_builder else []
        limit = max(1, self.rows - 1)
        return rows[-limit:]

    def render(self, commit=(), builder=None, what="render", state=None) -> None:
        """Ink: erase the live region, write new static lines, draw the live region again."""
        out = [self._erase()]
        for text, style in commit:
            self.static.append((text, style))
            for r in self._static_rows(text, style):
                out.append(self._row(r, style))
        del self.static[:-1000]
        if builder is not None:
            self.dyn_builder = builder
        rows = self._live_rows()
        for text, style, _kind in rows:
            out.append(self._row(text, style))
        self.dyn_count = len(rows)
        self.emit("".join(out), what, state)

    def redraw_row(self, kind: str, what: str) -> None:
        """`\\r`-redraw one row of the live region in place (the spinner, the input line)."""
        rows = self._live_rows()
        idx = next((i for i, r in enumerate(rows) if r[2] == kind), None)
        if idx is None or len(rows) != self.dyn_count or self.fresh:
            self.render(what=what)
            return
        up = self.dyn_count - 1 - idx
        up = min(up, self.y)
        text, style, _ = rows[idx]
        saved_fresh, saved_y = self.fresh, self.y
        self.fresh = True  # write on the current row after the CR
        body = self._row(text, style)
        self.fresh, self.y = saved_fresh, saved_y
        out = (f"\x1b[{up}A" if up else "") + "\r\x1b[K" + body + (f"\x1b[{up}B" if up else "")
        self.emit(out, what)

    def full_redraw(self) -> None:
        """After a resize: clear, then the newest static rows and the live region at the new width."""
        self.y, self.fresh, self.dyn_count = 0, True, 0
        live = self._live_rows()
        room = max(0, self.rows - 1 - len(live))
        static_rows = []
        for text, style in self.static:
            static_rows += [(r, style) for r in self._static_rows(text, style)]
        out = ["\x1b[H\x1b[2J"]
        for text, style in static_rows[-room:] if room else []:
            out.append(self._row(text, style))
        for text, style, _ in live:
            out.append(self._row(text, style))
        self.dyn_count = len(live)
        self.emit("".join(out), "resize")

    # -- layouts (live regions) -----------------------------------------------------------------
    def box_width(self) -> int:
        return max(4, self.cols - 1)

    def rule(self, ch: str = "─") -> str:
        return ch * max(1, self.cols - 1)

    @property
    def bullet(self) -> str:
        return "⏺" if self.look == "classic" else "●"

    @property
    def prompt_mark(self) -> str:
        return ">" if self.look == "classic" else "❯"

    def input_box(self) -> list:
        if self.look == "classic":  # Claude Code 1.x: a bordered box, "? for shortcuts" always
            w = self.box_width()
            inner = max(1, w - 4)
            line = "> " + clip_tail(self.input, max(0, inner - 2))
            return [("╭" + "─" * (w - 2) + "╮", "box", None),
                    ("│ " + pad(line, inner) + " │", "box", "input"),
                    ("╰" + "─" * (w - 2) + "╯", "box", None),
                    ("  ? for shortcuts", "dim", None)]
        # Claude Code 2.1: rules above and below "❯ ", the footer says what esc does now
        footer = "esc to interrupt" if self.mode != "idle" else "? for shortcuts"
        line = "❯ " + clip_tail(self.input, max(0, self.cols - 4))
        return [(self.rule(), "box", None), (line, None, "input"), (self.rule(), "box", None),
                ("  ⏸ manual mode on · " + footer, "dim", None)]

    def spinner_text(self) -> str:
        glyph = GLYPHS[self.spin_frame % len(GLYPHS)]
        secs = int(max(0.0, time.monotonic() - self.spin_start))
        return f"{glyph} {self.verb}… ({secs}s · esc to interrupt)"

    def idle_layout(self) -> list:
        return self.input_box()

    def working_layout(self) -> list:
        rows = []
        width = max(1, self.cols - 1)
        if self.partial:
            para = wrap(f"{self.bullet} " + self.partial, width)
            rows += [(r, None, "partial" if i == len(para) - 1 else None) for i, r in enumerate(para)]
            rows.append(("", None, None))
        for text, style in self.tool_live:
            rows.append((text, style, None))
        if self.tool_live:
            rows.append(("", None, None))
        rows.append((self.spinner_text(), "accent", "spinner"))
        rows.append(("", None, None))
        return rows + self.input_box()

    def dialog_layout(self) -> list:
        a = self.ask
        body = [("Bash command", "bold"), ("", None)]
        if self.look == "classic":  # bordered, the command first, then its description
            w = self.box_width()
            inner = max(1, w - 4)
            body += [(r, None) for r in wrap("  " + a["cmd"], inner, "  ")]
            body += [(r, "dim") for r in wrap("  " + a["desc"], inner, "  ")]
            body += [("", None), ("Do you want to proceed?", None)]
            for i, opt in enumerate(OPTIONS):
                mark = "❯ " if i == a["sel"] else "  "
                body += [(r, None) for r in wrap(f"{mark}{i + 1}. {opt}", inner, "     ")]
            rows = [("╭" + "─" * (w - 2) + "╮", "blue", None)]
            rows += [("│ " + pad(text, inner) + " │", "blue", None) for text, _ in body]
            rows.append(("╰" + "─" * (w - 2) + "╯", "blue", None))
            rows.append(("   Esc to cancel · Tab to amend", "dim", None))
            return rows
        # 2.1: a rule on top, the command between dashed rules, no side borders
        width = max(1, self.cols - 2)
        rows = [(self.rule(), "blue", None), (" Bash command", "blue", None)]
        rows += [(" " + r, "dim", None) for r in wrap(a["desc"], width)]
        rows.append((self.rule("╌"), "dim", None))
        rows += [(" " + r, None, None) for r in wrap(a["cmd"], width)]
        rows.append((self.rule("╌"), "dim", None))
        rows.append((" Do you want to proceed?", None, None))
        for i, opt in enumerate(OPTIONS):
            mark = "❯ " if i == a["sel"] else "  "
            rows += [(" " + r, "blue" if i == a["sel"] else None, None)
                     for r in wrap(f"{mark}{i + 1}. {opt}", width, "     ")]
        rows.append((" Esc to cancel · Tab to amend", "dim", None))
        return rows

    def banner(self) -> list:
        cwd = os.getcwd()
        if self.look == "classic":
            w = min(53, self.box_width())
            rows = [("╭" + "─" * (w - 2) + "╮", "box")]
            for text in ("✻ Welcome to Claude Code!", "", "  /help for help, /status for your current setup",
                         "", "  cwd: " + clip_tail(cwd, max(1, w - 13))):
                rows.append(("│ " + pad(text, w - 4) + " │", "box"))
            return rows + [("╰" + "─" * (w - 2) + "╯", "box"), ("", None)]
        return [(" ▐▛███▛█   Claude Code v2.1.332 (fake agent)", "accent"),
                ("▝▜██████▀  tmux-agentstate demo · no model", "dim"),
                (" ▝▝   ▝▝   " + clip_tail(cwd, max(1, self.cols - 12)), "dim"), ("", None)]

    # -- turns ---------------------------------------------------------------------------------------
    def start_task(self, prompt: str) -> None:
        self.tasks_started += 1
        self.input = ""
        self.mode = "task"
        self.verb = self.rng.choice(VERBS)
        self.spin_start = time.monotonic()
        self.spin_frame = 0
        self.partial, self.tool_live = "", []
        self.render([(f"{self.prompt_mark} " + prompt, "user"), ("", None)], self.working_layout,
                    "task", "working")
        self.task = self.task_body()
        self.spinning = True
        self.spin_next = time.monotonic() + self.spin_interval
        self.advance()

    def plan(self) -> list[str]:
        rng = self.rng
        steps = ["think"]
        for _ in range(rng.randint(1, 4)):
            steps.append(rng.choice(["think", "say", "tool", "tool", "ask"]))
        if "ask" not in steps and rng.random() < 0.35:
            steps.insert(rng.randint(1, len(steps)), "ask")
        return steps

    def task_body(self):
        """The script of one turn. Yields ('sleep', s, spin) or ('ask',); gets answers back."""
        rng = self.rng
        for step in self.plan():
            if step == "think":
                yield ("sleep", rng.uniform(1.0, 5.0), True)
            elif step == "say":
                text = " ".join(rng.sample(SENTENCES, rng.randint(1, 3)))
                yield from self.stream(text)
                self.partial = ""
                self.render([(f"{self.bullet} " + text, None), ("", None)], self.working_layout, "say")
            elif step == "tool":
                name, arg, result = rng.choice(SILENT_TOOLS)
                yield from self.silent_tool(f"{name}({arg})", result)
            elif step == "ask":
                cmd, desc, result = rng.choice(ASK_TOOLS)
                self.ask = {"cmd": cmd, "desc": desc, "sel": 0}
                answer = yield ("ask",)
                self.ask = None
                if answer == "no":
                    self.end_turn([(f"{self.bullet} Bash({cmd})", None),
                                   ("  ⎿  Interrupted by user", "err"), ("", None)])
                    return
                yield from self.silent_tool(f"Bash({cmd})", result)
        text = " ".join(rng.sample(SENTENCES, rng.randint(1, 3)))
        if rng.random() < 0.45:
            text += " " + rng.choice(QUESTIONS)
        yield from self.stream(text)
        self.partial = ""
        self.end_turn([(f"{self.bullet} " + text, None), ("", None)])

    def stream(self, text: str):
        words = text.split()
        i = 0
        while i < len(words):
            n = self.rng.randint(1, 3)
            before = len(wrap(f"{self.bullet} " + self.partial, max(1, self.cols - 1))) if self.partial else 0
            self.partial = " ".join(words[: i + n])
            i += n
            if before and len(wrap(f"{self.bullet} " + self.partial, max(1, self.cols - 1))) == before:
                self.redraw_row("partial", "stream")  # same rows: rewrite the last one in place
            else:
                self.render(what="stream")
            yield ("sleep", self.rng.uniform(0.04, 0.15), True)

    def silent_tool(self, call: str, result: str):
        """A tool that prints nothing while it runs: the last frame stays on screen, frozen."""
        self.tool_live = [(f"{self.bullet} " + call, None), ("  ⎿  Running…", "dim")]
        self.render(builder=self.working_layout, what="tool", state="working")
        yield ("sleep", self.rng.uniform(0.5, 6.0), False)
        self.tool_live = []
        self.render([(f"{self.bullet} " + call, None), ("  ⎿  " + result, "dim"), ("", None)],
                    self.working_layout, "tool-done")

    def end_turn(self, commit) -> None:
        self.task = None
        self.mode = "idle"
        self.spinning = False
        self.wake = None
        self.partial, self.tool_live = "", []
        self.render(commit, self.idle_layout, "idle", "idle")
        self.schedule_next_task()

    def advance(self, value=None) -> None:
        """Run the task script to its next wait."""
        gen = self.task
        if gen is None:
            return
        try:
            cmd = gen.send(value)
        except StopIteration:
            if self.task is gen:  # the script ended without ending the turn
                self.end_turn([])
            return
        if self.task is not gen:
            return
        if cmd[0] == "sleep":
            self.wake = time.monotonic() + self.d(cmd[1])
            was, self.spinning = self.spinning, bool(cmd[2])
            if self.spinning and not was:
                self.spin_next = time.monotonic() + self.spin_interval
        elif cmd[0] == "ask":
            self.mode = "ask"
            self.wake = None
            self.spinning = False
            self.render(builder=self.dialog_layout, what="ask", state="blocked")
            if self.autopilot:
                self.ap_at = time.monotonic() + self.d(self.user_rng.uniform(3.0, 8.0))

    def answer(self, choice: str) -> None:
        if self.mode != "ask":
            return
        self.mode = "task"
        self.ap_at = None
        self.spinning = True
        self.spin_next = time.monotonic() + self.spin_interval
        self.advance(choice)

    def interrupt(self) -> None:
        gen, self.task = self.task, None
        commit = []
        if self.partial:
            commit.append((f"{self.bullet} " + self.partial, None))
        commit += [("  ⎿  Interrupted by user", "err"), ("", None)]
        if gen is not None:
            gen.close()
        self.ask = None
        self.end_turn(commit)

    # -- autopilot --------------------------------------------------------------------------------
    def schedule_next_task(self, first: bool = False) -> None:
        if not self.autopilot:
            return
        delay = self.user_rng.uniform(1.0, 2.0) if first else self.user_rng.uniform(3.0, 10.0)
        self.ap_at = time.monotonic() + self.d(delay)
        self.ap_typing = None

    def autopilot_step(self, now: float) -> None:
        if self.ap_at is None or now < self.ap_at:
            return
        self.ap_at = None
        rng = self.user_rng
        if self.mode == "ask":
            r = rng.random()
            self.answer("no" if r < 0.15 else "always" if r < 0.3 else "yes")
        elif self.mode == "idle":
            if self.ap_typing is None:
                if self.max_tasks and self.tasks_started >= self.max_tasks:
                    self.quit = True
                    return
                self.ap_typing = rng.choice(TASKS)
                self.input = ""
            if len(self.input) < len(self.ap_typing):
                self.input = self.ap_typing[: len(self.input) + 1]
                self.redraw_row("input", "type")
                last = len(self.input) == len(self.ap_typing)
                self.ap_at = now + self.d(rng.uniform(0.25, 0.5) if last else rng.uniform(0.03, 0.12))
            else:
                task, self.ap_typing = self.input, None
                self.start_task(task)

    # -- keys -----------------------------------------------------------------------------------------
    def on_bytes(self, data: bytes) -> None:
        data = self.esc_pending + data
        self.esc_pending = b""
        data = data.replace(b"\x1b[200~", b"").replace(b"\x1b[201~", b"")  # bracketed paste
        text = data.decode("utf-8", "replace")
        i = 0
        while i < len(text) and not self.quit:
            c = text[i]
            if c == "\x1b":
                if i + 1 == len(text):
                    self.key("esc")
                    i += 1
                    continue
                if text[i + 1] in "[O":
                    j = i + 2
                    while j < len(text) and not ("@" <= text[j] <= "~"):
                        j += 1
                    seq = text[i:j + 1]
                    self.key({"\x1b[A": "up", "\x1b[B": "down", "\x1bOA": "up", "\x1bOB": "down",
                              "\x1b[Z": "backtab"}.get(seq, "ignored"))
                    i = j + 1
                    continue
                self.key("esc")  # ESC + key (Alt-key): treat as Esc, drop the key
                i += 2
                continue
            self.key(c)
            i += 1

    def key(self, k: str) -> None:
        if self.mode == "ask":
            a = self.ask
            if k in ("1", "\r", "\n"):
                self.answer({0: "yes", 1: "always"}.get(a["sel"], "no") if k != "1" else "yes")
            elif k == "2":
                self.answer("always")
            elif k in ("3", "esc", "\x03"):
                self.answer("no")
            elif k in ("up", "down"):
                a["sel"] = (a["sel"] + (1 if k == "down" else -1)) % len(OPTIONS)
                self.render(what="select")
            return
        if k == "\x03":
            if self.mode == "task":
                self.interrupt()
            elif self.input:
                self.input = ""
                self.redraw_row("input", "key")
            else:
                self.quit = True
            return
        if k == "\x04":
            if self.mode == "idle" and not self.input:
                self.quit = True
            return
        if k == "esc":
            if self.mode == "task":
                self.interrupt()
            return
        if k in ("\r", "\n"):
            if self.mode == "idle" and self.input.strip():
                self.ap_typing, self.ap_at = None, None
                self.start_task(self.input.strip())
            return
        if k in ("\x7f", "\b"):
            if self.input:
                self.input = self.input[:-1]
                self.redraw_row("input", "key")
            return
        if k == "\x15":  # Ctrl-U
            self.input = ""
            self.redraw_row("input", "key")
            return
        if len(k) == 1 and (k >= " " or k == "\t") and k != "\x7f":
            if len(self.input) < 2000:
                self.input += " " if k == "\t" else k
                self.redraw_row("input", "key")

    # -- terminal setup ----------------------------------------------------------------------------
    def query_size(self) -> None:
        rows = cols = 0
        if fcntl is not None:
            for fd in (self.out_fd, self.in_fd):
                if fd is None:
                    continue
                try:
                    rows, cols = struct.unpack("HHHH", fcntl.ioctl(fd, termios.TIOCGWINSZ,
                                                                   b"\0" * 8))[:2]
                except OSError:
                    continue
                if rows and cols:
                    break
        if not (rows and cols):
            try:
                rows, cols = int(os.environ.get("LINES", 0)), int(os.environ.get("COLUMNS", 0))
            except ValueError:
                rows = cols = 0
        self.rows = rows if rows > 0 else 24
        self.cols = cols if cols > 0 else 80

    def setup_tty(self) -> None:
        if self.in_fd is None or termios is None:
            return
        try:
            if not os.isatty(self.in_fd):
                return
            self.saved_tty = termios.tcgetattr(self.in_fd)
            new = termios.tcgetattr(self.in_fd)
            new[0] &= ~(termios.IXON | termios.ICRNL | termios.INLCR | termios.IGNCR)
            new[3] &= ~(termios.ECHO | termios.ICANON | termios.ISIG | termios.IEXTEN)
            new[6][termios.VMIN] = 1
            new[6][termios.VTIME] = 0
            termios.tcsetattr(self.in_fd, termios.TCSANOW, new)
        except (OSError, termios.error):
            self.saved_tty = None

    def restore_tty(self) -> None:
        if self.saved_tty is not None:
            try:
                termios.tcsetattr(self.in_fd, termios.TCSANOW, self.saved_tty)
            except (OSError, termios.error):
                pass
            self.saved_tty = None

    def _on_signal(self, signum, _frame) -> None:
        if signum == signal.SIGWINCH:
            self.winch = True
        else:
            self.quit = True

    def install_signals(self) -> dict:
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        old = {"wakeup": signal.set_wakeup_fd(self.wake_w, warn_on_full_buffer=False)}
        for name in ("SIGTERM", "SIGHUP", "SIGINT", "SIGWINCH", "SIGQUIT"):
            sig = getattr(signal, name, None)
            if sig is not None:
                old[sig] = signal.signal(sig, self._on_signal)
        if hasattr(signal, "SIGPIPE"):
            old[signal.SIGPIPE] = signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        return old

    def restore_signals(self, old: dict) -> None:
        for sig, handler in old.items():
            if sig == "wakeup":
                signal.set_wakeup_fd(handler if isinstance(handler, int) else -1)
            else:
                try:
                    signal.signal(sig, handler)
                except (OSError, ValueError, TypeError):
                    pass
        for fd in (self.wake_r, self.wake_w):
            if fd is not None:
                os.close(fd)
        self.wake_r = self.wake_w = None

    # -- main loop -----------------------------------------------------------------------------------
    def next_deadline(self) -> float:
        deadlines = [time.monotonic() + 1.0]
        if self.spinning and self.mode == "task":
            deadlines.append(self.spin_next)
        if self.wake is not None and self.mode == "task":
            deadlines.append(self.wake)
        if self.ap_at is not None:
            deadlines.append(self.ap_at)
        return min(deadlines)

    def tick(self, now: float) -> None:
        if self.mode == "task" and self.spinning and now >= self.spin_next:
            self.spin_frame += 1
            self.redraw_row("spinner", "spinner")
            self.spin_next = max(self.spin_next + self.spin_interval, now + self.spin_interval / 2)
        if self.mode == "task" and self.wake is not None and now >= self.wake:
            self.wake = None
            self.advance()
        if self.autopilot:
            self.autopilot_step(now)

    def run(self) -> int:
        old_signals = self.install_signals()
        self.setup_tty()
        self.query_size()
        try:
            head = ("\x1b[?1049h" if self.alt else "") + "\x1b[?25l" + f"\x1b]0;{TITLE}\x07" + \
                   "\x1b[H\x1b[2J"
            self.emit(head, "start")
            self.render(self.banner(), self.idle_layout, "idle", "idle")
            self.schedule_next_task(first=True)
            while not self.quit:
                timeout = max(0.0, self.next_deadline() - time.monotonic())
                fds = [self.wake_r] + ([self.in_fd] if self.in_fd is not None else [])
                try:
                    ready, _, _ = select.select(fds, [], [], timeout)
                except (OSError, ValueError):
                    ready = []
                    if self.in_fd is not None:
                        self.in_fd = None
                if self.wake_r in ready:
                    try:
                        while os.read(self.wake_r, 512):
                            pass
                    except OSError:
                        pass
                if self.quit:
                    break
                if self.winch:
                    self.winch = False
                    self.query_size()
                    self.full_redraw()
                if self.in_fd is not None and self.in_fd in ready:
                    try:
                        data = os.read(self.in_fd, 4096)
                    except (BlockingIOError, InterruptedError):
                        data = None
                    except OSError:
                        data = b""
                    if data == b"":
                        self.in_fd = None
                        if not self.autopilot:
                            self.quit = True
                            break
                    elif data:
                        self.on_bytes(data)
                if not self.quit:
                    self.tick(time.monotonic())
        except Quit:
            pass
        finally:
            self.restore_tty()
            try:
                tail = self._erase() + RESET + "\x1b[?25h" + ("\x1b[?1049l" if self.alt else "")
                self._write_all(tail.encode())
                self._append(self.trace_path, f"{time.time():.3f} {self.written} exit exit\n")
            except Quit:
                pass
            self.restore_signals(old_signals)
        return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m tmux_agentstate.demo.fake_agent",
        description="A fake coding agent that draws like Claude Code (working / idle / blocked).")
    p.add_argument("--autopilot", action="store_true",
                   help="play the user too: answer dialogs after 3-8 s, type tasks after 3-10 s")
    p.add_argument("--seed", type=int, default=None, help="random seed (deterministic script)")
    p.add_argument("--speed", type=float, default=1.0,
                   help="divide every delay by this (e.g. 10 runs ten times faster)")
    p.add_argument("--tasks", type=int, default=0,
                   help="autopilot: exit when this many tasks are done (0: run until killed)")
    p.add_argument("--alt", action="store_true", help="draw on the alternate screen")
    p.add_argument("--look", choices=LOOKS, default="current",
                   help="current: Claude Code 2.1 (rules around the input, no side borders, "
                        "'⏸ manual mode on · …' footer); classic: 1.x bordered boxes, '> ' prompt")
    args = p.parse_args(argv)
    if not args.speed > 0:
        p.error("--speed must be positive")
    in_fd = 0
    try:
        os.fstat(0)
    except OSError:
        in_fd = None
    agent = FakeAgent(autopilot=args.autopilot, seed=args.seed, speed=args.speed, tasks=args.tasks,
                      alt=args.alt, look=args.look, in_fd=in_fd, out_fd=sys.stdout.fileno(),
                      truth_path=os.environ.get("AGENTSTATE_TRUTH_FILE") or None,
                      trace_path=os.environ.get("AGENTSTATE_TRACE_FILE") or None)
    try:
        return agent.run()
    except KeyboardInterrupt:  # a SIGINT before the handlers were in place
        agent.restore_tty()
        return 130


if __name__ == "__main__":
    sys.exit(main())
