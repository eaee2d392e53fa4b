"""Gemini CLI's "Waiting for user confirmation..." row (0.12.0, 0.26.0) reads blocked on its own:
a backstop for a dialog whose options or title the other rules miss. Checked on every real
capture that shows the row, with the dialog and title rules taken out."""
import dataclasses

import pytest

from tmux_agentstate.core.catalog import BUNDLED_DIR, Catalog
from tmux_agentstate.core.fixtures import load_index
from tmux_agentstate.core.screen import replay

GEMINI = Catalog([BUNDLED_DIR]).get("gemini")
BACKSTOP = "waiting-for-confirmation"
WITH_ROW = [fx for fx in load_index() if fx.agent == "gemini"
            and "Waiting for user confirmation" in fx.path.with_suffix(".screen.txt").read_text()]


def test_the_row_is_on_real_captures():
    assert len(WITH_ROW) >= 10 and all(fx.state == "blocked" for fx in WITH_ROW)


@pytest.mark.parametrize("fx", WITH_ROW, ids=[fx.id for fx in WITH_ROW])
def test_the_row_alone_reads_blocked(fx):
    # only the backstop among the blocked rules, and no title (a title-less replay)
    alone = dataclasses.replace(GEMINI, rules=tuple(
        r for r in GEMINI.rules if r.state != "blocked" or r.id == BACKSTOP))
    view = replay(fx.path.read_bytes(), fx.rows, fx.cols).view()
    match = alone.evaluate(view)
    assert (match.state, match.rule) == ("blocked", BACKSTOP), "\n".join(view.rows)


def test_no_other_gemini_capture_reads_blocked_by_it():
    for fx in load_index():
        if fx.agent != "gemini" or fx in WITH_ROW:
            continue
        view = replay(fx.path.read_bytes(), fx.rows, fx.cols).view()
        assert next((r for r in GEMINI.rules if r.id == BACKSTOP)).match(view) is None, fx.id
