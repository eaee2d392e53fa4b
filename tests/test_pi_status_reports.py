"""pi 1.x's own word against its screen: every real capture of a pi that reports (1.1.0 on,
made with PI_PROGRAM_STATUS=1, as `launch pi` runs it) carries pi's OSC 7501 reports in its
bytes; the pane's root record at the end of the capture (core/status.py's StatusBoard, as the
sidecar keeps it) must say the state the capture is labelled with (done and error count as
idle). 1.0.x (1.0.3 captured) reports nothing: its screen is all there is.

Where pi's report and its screen disagree by design, the gap is listed in KNOWN_GAPS by the kind
of dialog, with what pi reports instead, so a pi release that closes it (or a new gap) shows."""
import pytest

from status_reports import check_last_report, release, root_at_end
from tmux_agentstate.core.fixtures import load_index

REPORTS_SINCE = (1, 1, 0)  # pi's changelog: program status reporting added in 1.1.0

PI_1X = [fx for fx in load_index() if fx.agent == "pi" and release(fx) >= REPORTS_SINCE]
BEFORE = [fx for fx in load_index() if fx.agent == "pi" and (1,) <= release(fx) < REPORTS_SINCE]

# kind of capture -> (what pi's root record says instead, why)
KNOWN_GAPS = {
    "question": ("working", "the bundled question tool draws its picker with ctx.ui.custom, and pi "
                            "reports `blocked` only for its own dialogs (ctx.ui.select / confirm / "
                            "input / editor, login): a custom component's wait stays `working`"),
}


def test_there_are_pi_1x_captures_of_every_state():
    assert {fx.state for fx in PI_1X} == {"blocked", "working", "idle"}
    assert len({fx.agent_version for fx in PI_1X}) >= 2  # the oldest reporting 1.x and the newest


def test_a_1_0_pi_writes_no_report():
    for fx in BEFORE:
        assert root_at_end(fx.path.read_bytes()) is None, fx.id


@pytest.mark.parametrize("fx", PI_1X, ids=[fx.id for fx in PI_1X])
def test_pis_last_report_says_the_labelled_state(fx):
    # pi's own dialogs carry their title
    check_last_report(fx, "pi", KNOWN_GAPS, hint=" (PI_PROGRAM_STATUS=1?)", blocked_has_message=True)
