"""Which agent a pane shows when no process of ours can tell (an ssh pane: the agent runs on
another machine): inferred from the screen, with hysteresis. Pure.

Evidence on one look (`present`): an agent is present when
  - it is identified: one of its manifest's `[identify]` title or screen patterns matches, or,
    once it is the adopted agent, one of its own non-fallback rules does (a screen mid-turn
    that no longer shows its banner); AND
  - its UI is where the cursor is: one of its positional rules, or an identify screen pattern,
    matches on the cursor row or below it. After `cat` of a transcript (or a log scrolling
    past) the shell's prompt, with the cursor, sits below everything the text drew, so the
    agent-looking rows are all above the cursor.
Two agents that tie on the identify score: nobody (never a guess between two).

The adopted agent needs its UI at the cursor only while the cursor row looks like a shell's
prompt: a dialog may park the cursor on its own hint row, above its UI's end, and a blocked
agent must stay seen however long the user is away.

Over time (`Inference`): an agent is adopted once it is present on every look spanning
ADOPT seconds, the screen not scrolling meanwhile (text going past is not a program waiting
at its UI); the adopted agent is dropped once no agent was present for DROP seconds.

A nested tmux inside the pane (the user attached to a tmux on the far side) is read as what
it shows: its status line (the first or last row holding its window list, e.g.
`[main] 0:bash* 1:vim-`) is taken out of the view before anything reads it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable

from .manifest import Manifest
from .screen import ScreenView

# An agent must be seen on every look for this long before it is adopted: a real agent's
# screen stays (it waits for the user, or redraws its own UI), a transcript scrolling past or
# a screen drawn once by `cat` does not keep its UI under the cursor. One second plus one
# sweep (0.7 s by default) keeps a real agent's adoption within ~2 s.
ADOPT = 1.0
# The adopted agent is dropped once no agent was present for this long: long enough that a
# full-screen redraw, a resize or a scroll mid-turn (a few looks without the UI under the
# cursor) does not drop and re-adopt it (which would announce its prompt again), short
# enough that the shell back in front soon says nothing.
DROP = 10.0

# a tmux status line: the default `[session] 0:name* 1:name-  "host" 12:00 06-Dec-26`, and
# the common themes that keep the window list without the session (` 0:zsh  1:claude*`: two
# windows at least, one of them current; the flags * - # ! ~ M Z end a window's name). Each
# pattern is linear: the row is the far side's text, any text (no backtracking to exploit).
_SESSION_LIST = re.compile(r"^\s*\[[^\]\n]{1,40}\]\s+\d+:\S")   # [main] 0:bash*
_WINDOW_LIST = re.compile(r"^\s*\d+:\S")                          # 0:zsh- 1:claude*
_CURRENT_WINDOW = re.compile(r"(?:^|\s)\d+:\S*\*[-MZ]{0,3}(?:\s|$)")
_WINDOWS = re.compile(r"(?:^|\s)\d+:\S+")


POSITIONAL = ("screen", "cursor_row", "bottom", "top")  # rule regions that have rows


def is_tmux_status(row: str) -> bool:
    """A row that is a tmux status line: a window list with its current window marked."""
    if not _CURRENT_WINDOW.search(row):
        return False
    if _SESSION_LIST.search(row):
        return True
    return bool(_WINDOW_LIST.search(row)) and len(_WINDOWS.findall(row)) >= 2


def without_tmux_status(view: ScreenView) -> ScreenView:
    """The view without a nested tmux's status line (its first or last row), so the rules
    read what the nested tmux shows. The view itself when there is none."""
    rows, cursor = list(view.rows), view.cursor_row
    if not rows:
        return view
    last = max((i for i, r in enumerate(rows) if r.strip()), default=-1)
    if last >= 0 and last == len(rows) - 1 and is_tmux_status(rows[last]):
        rows = rows[:last]
        cursor = min(cursor, len(rows) - 1)
    elif rows and is_tmux_status(rows[0]):
        rows, cursor = rows[1:], max(cursor - 1, 0)
    else:
        return view
    return ScreenView(rows, cursor, view.title, view.osc_state)


def _has_text(row: str) -> bool:
    """A row with a letter or digit: a prompt or a line of output, not a border or blank."""
    return any(c.isalnum() for c in row)


def below_cursor(view: ScreenView) -> ScreenView | None:
    """The rows from the cursor's down: where a program waiting for input has its UI. None
    when the cursor is parked off the text, on a row with no letter or digit and nothing
    written below it (a dialog that hides its cursor there): then the whole screen is the
    program's. A shell's prompt always has text on the cursor row."""
    rows = view.rows
    at = min(max(view.cursor_row, 0), len(rows))
    if not any(_has_text(r) for r in rows[at:]):
        return None
    return ScreenView(rows[at:], 0, "", "")


def identified(m: Manifest, view: ScreenView, adopted: bool = False) -> int:
    """How strongly the screen says it is `m` (Identity.screen_score); for the adopted agent,
    at least 1 while one of its non-fallback rules matches."""
    score = m.identify.screen_score(view)
    if score or not adopted:
        return score
    return 1 if m.evaluate(view).rule is not None else 0


def ui_at_cursor(m: Manifest, below: ScreenView | None) -> bool:
    """Whether `m`'s UI is on the cursor row or below it: a positional rule (or mark) of its
    manifest, or an identify screen pattern, matches there (below_cursor None: the cursor is
    parked off the text, the whole screen is the program's)."""
    if below is None:
        return True
    if any(p.search(below.text) for p in m.identify.screen):
        return True
    return any(r.region in POSITIONAL and r.match(below) is not None
               for r in m.rules + m.marks)


# a shell's prompt on the cursor row: text ending in a prompt character ("user@host:~$ ",
# "bash-5.1# ", "% ", "~> ") or a row opening with a prompt glyph ("➜  ~ git:(main) ", "❯ ",
# "❯ ~/src"; not "❯ 1. Yes", a picker's selected line)
_PROMPT = re.compile(r"\S\s?[$#%>]\s?$|^[$#%>]\s?$|^\s*➜\s|^\s*[❯λ»](\s+[~/.\w-]*)?\s*$")
# a figure ending the row ("context: 0.9%", "ctx 12%": a status bar's percentage, a number standing
# alone) is no prompt; zsh's "host1% " (the number part of a word) still is
_PERCENT = re.compile(r"(?:^|[\s(:])\d+(?:\.\d+)?%\s?$")


def prompt_at_cursor(view: ScreenView) -> bool:
    """Whether the cursor row looks like a shell's prompt (with nothing typed yet)."""
    rows = view.rows
    row = rows[view.cursor_row] if 0 <= view.cursor_row < len(rows) else ""
    text = row.rstrip() + " "
    return _has_text(row) and bool(_PROMPT.search(text)) and not _PERCENT.search(text)


def present(manifests: Iterable[Manifest], view: ScreenView,
            adopted: str | None = None) -> Manifest | None:
    """The one agent the screen shows now (see the module's doc), or None: no agent, or two
    that tie. The adopted agent needs its UI at the cursor only while the cursor row looks
    like a shell's prompt: a dialog that parks its cursor on its own hint row, above its
    UI's end, is still the agent's while it waits (a blocked prompt must not be dropped)."""
    below = below_cursor(view)
    prompt = prompt_at_cursor(view)
    scored = []
    for m in manifests:
        score = identified(m, view, adopted == m.name)
        if score and ((adopted == m.name and not prompt) or ui_at_cursor(m, below)):
            scored.append((score, m))
    if not scored:
        return None
    scored.sort(key=lambda s: -s[0])
    if len(scored) > 1 and scored[1][0] == scored[0][0]:
        return None  # ambiguous: nobody
    return scored[0][1]


def scrolled(before: list[str], after: list[str], least: int = 3) -> bool:
    """Whether the screen scrolled between two looks: rows with text moved up together (at
    least `least` of them, or half of those that could have)."""
    n = min(len(before), len(after))
    for d in range(1, n):
        pairs = [(after[i], before[i + d]) for i in range(n - d) if _has_text(after[i])]
        same = sum(a == b for a, b in pairs)
        if pairs and same >= least and same * 2 >= len(pairs):
            return True
    return False


@dataclass
class Inference:
    """One pane's inferred agent, across looks. `look` at each change of its screen (and at
    each sweep: time alone adopts or drops); `adopted` is the agent in force (None: none)."""
    adopt: float = ADOPT
    drop: float = DROP
    adopted: Manifest | None = None
    candidate: str | None = None       # the agent present at the last look
    candidate_since: float = 0.0       # since when it has been present on every look
    absent_since: float | None = None  # since when no agent was present (None: one is)
    _last: Manifest | None = field(default=None, repr=False)
    _rows: list = field(default_factory=list, repr=False)  # the rows of the last look
    _seen: tuple = field(default=(), repr=False)           # (rows, cursor row, title) of it

    def look(self, manifests: Iterable[Manifest], view: ScreenView | None, now: float) -> bool:
        """One look at the screen (None: unchanged since the last look, the same evidence).
        Returns True when the adopted agent changed (adopted, replaced, or dropped)."""
        moved = False
        if view is not None and (view.rows, view.cursor_row, view.title) == self._seen:
            view = None  # the same screen: the same evidence, no search
        if view is not None:
            self._seen = (list(view.rows), view.cursor_row, view.title)
            moved, self._rows = scrolled(self._rows, view.rows), list(view.rows)
            manifests = list(manifests)
            self._last = present(manifests, view, self.adopted.name if self.adopted else None)
            if self._last is not None:  # the manifest as loaded now (a reload replaces it)
                self._last = next((m for m in manifests if m.name == self._last.name), self._last)
        seen = self._last
        if seen is None:
            self.candidate = None
            if self.absent_since is None:
                self.absent_since = now
            if self.adopted is not None and now - self.absent_since >= self.drop:
                self.adopted = None
                return True
            return False
        self.absent_since = None
        if seen.name != self.candidate or (moved and self.adopted is None):
            # a screen that scrolled is text going past (a log, a `cat`), not a program
            # waiting at its UI: the agent must be seen again, still, for `adopt` seconds
            self.candidate, self.candidate_since = seen.name, now
        if self.adopted is not None and self.adopted.name == seen.name:
            changed = self.adopted is not seen  # its manifest was reloaded
            self.adopted = seen
            return changed
        if now - self.candidate_since >= self.adopt:
            self.adopted = seen
            return True
        return False
