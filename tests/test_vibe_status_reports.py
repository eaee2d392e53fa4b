"""Mistral Vibe's own word against its screen: Vibe 3.x reports its state with OSC 7501 in its
own bytes (`state=working:app=vibe`, `state=blocked:kind=permission|question`, `state=done` once
a turn ends), so every real capture of it carries its reports; the pane's root record at the end
of each (tests/status_reports.py) must say the state the capture is labelled with.

The folder-trust question comes before the session that reports exists: its captures hold no
report at all (NO_REPORT), and the screen is all there is. 2.x (2.26.1 captured, the Textual app)
reports nothing either."""
import pytest

from status_reports import check_last_report, release, root_at_end
from tmux_agentstate.core.fixtures import load_index

REPORTING = [fx for fx in load_index() if fx.agent == "vibe" and release(fx) >= (3,)]
BEFORE = [fx for fx in load_index() if fx.agent == "vibe" and release(fx) < (3,)]
NO_REPORT = {"folder-trust": "drawn by the TUI before it starts the app server whose session reports"}
KNOWN_GAPS: dict = {}   # kind of capture -> (what Vibe's root record says instead, why): none


def test_there_are_reporting_captures_of_every_state():
    assert {fx.state for fx in REPORTING} == {"blocked", "working", "idle"}


def test_a_2x_vibe_writes_no_report():
    assert BEFORE
    for fx in BEFORE:
        assert root_at_end(fx.path.read_bytes()) is None, fx.id


@pytest.mark.parametrize("fx", REPORTING, ids=[fx.id for fx in REPORTING])
def test_vibes_last_report_says_the_labelled_state(fx):
    if fx.kind in NO_REPORT:
        assert root_at_end(fx.path.read_bytes()) is None, f"{fx.id}: now reports; drop it from NO_REPORT"
        return
    # Vibe's blocked reports carry the dialog's title
    check_last_report(fx, "vibe", KNOWN_GAPS, blocked_has_message=True)
