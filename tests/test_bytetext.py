"""core/bytetext.py: the text a chunk of raw bytes draws, for the pipe intake's pre-check of a
busy pane (a prompt's patterns searched in its bytes, not its screen)."""
from __future__ import annotations

import pytest

from tmux_agentstate.core.bytetext import visible_text
from tmux_agentstate.core.catalog import Catalog
from tmux_agentstate.core.fixtures import load_index


def test_words_placed_at_their_columns_read_as_one_row():
    # Ink (Claude Code) writes each word of a dialog at its column (CHA), or moves right (CUF)
    raw = b"\x1b[2GQuick\x1b[8Gsafety\x1b[15Gcheck:\x1b[1C\x1b[1mIs\x1b[22m this\r\r\nnext"
    assert visible_text(raw) == " Quick safety check: Is this\n\nnext"


def test_rows_apart_and_no_escape_left():
    raw = (b"\x1b[?2026h\x1b[38;3H\x1b[1mWould you like to run it?\x1b[40;3H\x1b[22mYes\x1b[K"
           b"\x1b]0;\xe2\xa0\xb9 title\x07\x1bP1$r0m\x1b\\\x07\x08end")
    text = visible_text(raw)
    assert text == "\nWould you like to run it?\nYes\n⠹ title\nend"  # the title: its own row
    assert "\x1b" not in text and "\x07" not in text and "$r" not in text


def test_broken_bytes_are_replaced_not_raised():
    assert visible_text(b"ok \xff\xfe \x1b[") == "ok \ufffd\ufffd "


# opencode and Kilo (one renderer) write only the cells that changed: a dialog drawn over
# other text comes in pieces, found when the screen is read (the pane goes quiet)
PIECEMEAL = {"opencode", "kilo"}


@pytest.mark.parametrize("agent", sorted({f.agent for f in load_index()} - PIECEMEAL))
def test_the_prompts_of_agents_are_found_in_their_bytes(agent):
    """Every real capture of a prompt: the manifest's blocked patterns match the text of its
    bytes (one miss in eight at most: a dialog drawn over one that looks alike)."""
    manifest = Catalog().get(agent)
    blocked = [f for f in load_index() if f.agent == agent and f.state == "blocked"]
    assert blocked
    hint = manifest.blocked_hint
    missed = [f.id for f in blocked if not hint.may_be_in(f.path.read_bytes())
              or hint.search(visible_text(f.path.read_bytes())) is None]
    assert len(missed) <= len(blocked) // 8, missed


def test_bytes_with_no_word_of_any_prompt_are_not_searched():
    hint = Catalog().get("claude").blocked_hint
    spinner = "\r✻ Thinking… (3s · esc to interrupt)\x1b[K".encode()
    assert not hint.may_be_in(spinner)
    dialog = b"\x1b[2GDo\x1b[5Gyou\x1b[9Gwant\x1b[14Gto\x1b[17Gproceed?\r\n \xe2\x9d\xaf 1. Yes"
    assert hint.may_be_in(dialog) and hint.search(visible_text(dialog)) is not None
