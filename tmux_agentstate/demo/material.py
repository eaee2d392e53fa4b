"""The fake agent's material: what it says (tasks, sentences, tools, dialog options), how it
looks (glyphs, colours), and the text-width helpers its drawing measures rows with."""
from __future__ import annotations

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


class Quit(Exception):
    """The fake agent ends (a key, a signal, its tasks done)."""
