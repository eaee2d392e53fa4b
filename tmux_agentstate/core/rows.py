"""Rows of a screen region as the rules read them (pure): the row a pattern matches, the rows
below a finished turn, wrapped paragraphs rejoined."""
from __future__ import annotations

import re

from .patterns import Pattern


def below_last(not_below, text: str) -> str:
    """The rows below the last row any `not_below` pattern matches (all of `text` if none
    does): all that can count for a rule with `not_below` rows. Found once per look, not once
    per pattern of the rule."""
    cut = -1
    for p in not_below:
        pos = 0
        while (m := p.search(text, pos)) is not None:
            row_end = text.find("\n", m.start())
            cut = max(cut, len(text) if row_end < 0 else row_end)
            if row_end < 0:
                break
            pos = row_end + 1
    return text if cut < 0 else text[cut + 1:]


# a row that starts a list item or an entry, never the rest of a wrapped sentence: a number and
# a dot, a bullet, a selection arrow, a tree branch, a box edge
_ITEM_START = re.compile(r"\s*(\d+[.)]\s|[•◦›❯>*·\-–└├│╭╰■✔✗⚠])")


def paragraphs(rows: list[str]) -> list[str]:
    """The rows with each wrapped paragraph on one row: a row that starts at the same column as
    the non-blank row above it, and not with a list marker, continues it (joined with one
    space). A question an agent wraps over several rows on a narrow pane reads as one row."""
    out: list[str] = []
    indent = None  # the column the paragraph being built starts at
    for row in rows:
        text = row.rstrip()
        col = len(text) - len(text.lstrip())
        if text and indent == col and not _ITEM_START.match(text):
            out[-1] += " " + text.strip()
            continue
        out.append(text)
        indent = col if text else None
    return out


def find_line(pattern: Pattern, text: str) -> str | None:
    """The first row of `text` (rows joined by \\n) that `pattern` matches, searched row by row
    in meaning but in one regex call: one search over the joined text is ~10x cheaper."""
    pos = 0
    while True:
        m = pattern.search(text, pos)
        if m is None:
            return None
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        if m.end() <= end:
            return text[start:end]
        # the match ran across a row break (e.g. `\\s*`): try that row alone, then go on
        if pattern.search(text[start:end]):
            return text[start:end]
        pos = end + 1
        if pos > len(text):
            return None
