"""pi 1.x's own word against its screen: every real capture of a pi that reports (1.1.0 on,
made with PI_PROGRAM_STATUS=1, as `launch pi` runs it) carries pi's OSC 7501 reports in its
bytes; the pane's root record at the end of the capture (core/status.py's StatusBoard, as the
sidecar keeps it) must say the state the capture is labelled with (done and error count as
idle). 1.0.x (1.0.3 captured) reports nothing: its screen is all there is.

Where pi's report and its screen disagree by design, the gap is listed in KNOWN_GAPS by the kind
of dialog, with what pi reports instead, so a pi release that closes it (or a new gap) shows."""
import re

import pytest

from tmux_agentstate.core.fixtures import load_index
from tmux_agentstate.core.status import StatusBoard

OSC_7501 = re.compile(rb"\x1b\]7501;([^\x07\x1b]*)(?:\x07|\x1b\\)")
AS_STATE = {"working": "working", "blocked": "blocked", "done": "idle", "error": "idle", "idle": "idle"}


REPORTS_SINCE = (1, 1, 0)  # pi's changelog: program status reporting added in 1.1.0


def release(fx) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", fx.agent_version)[:3])


PI_1X = [fx for fx in load_index() if fx.agent == "pi" and release(fx) >= REPORTS_SINCE]
BEFORE = [fx for fx in load_index() if fx.agent == "pi" and (1,) <= release(fx) < REPORTS_SINCE]

# kind of capture -> (what pi's root record says instead, why)
KNOWN_GAPS = {
    "question": ("working", "the bundled question tool draws its picker with ctx.ui.custom, and pi "
                            "reports `blocked` only for its own dialogs (ctx.ui.select / confirm / "
                            "input / editor, login): a custom component's wait stays `working`"),
}


def root_at_end(raw: bytes):
    board = StatusBoard()
    for n, m in enumerate(OSC_7501.finditer(raw)):
        board.take(m.group(1).decode("utf-8", "replace"), float(n))
    return board.root


def test_there_are_pi_1x_captures_of_every_state():
    assert {fx.state for fx in PI_1X} == {"blocked", "working", "idle"}
    assert len({fx.agent_version for fx in PI_1X}) >= 2  # the oldest reporting 1.x and the newest


def test_a_1_0_pi_writes_no_report():
    for fx in BEFORE:
        assert root_at_end(fx.path.read_bytes()) is None, fx.id


@pytest.mark.parametrize("fx", PI_1X, ids=[fx.id for fx in PI_1X])
def test_pis_last_report_says_the_labelled_state(fx):
    root = root_at_end(fx.path.read_bytes())
    assert root is not None, f"{fx.id}: no OSC 7501 root record in the bytes (PI_PROGRAM_STATUS=1?)"
    assert root.status.app == "pi"
    said = AS_STATE[root.status.state]
    if fx.kind in KNOWN_GAPS and fx.state == "blocked":
        assert said == KNOWN_GAPS[fx.kind][0], f"{fx.id}: the known gap changed: pi says {root.status}"
        return
    assert said == fx.state, f"{fx.id} ({fx.kind}): pi says {root.status}, the screen is {fx.state}"
    if said == "blocked":  # pi's own dialogs carry their title
        assert root.status.message, root.status
