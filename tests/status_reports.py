"""An agent's own word against its screen, shared by the tests of agents that report their state
with OSC 7501 in their own bytes (test_pi_status_reports.py, test_vibe_status_reports.py).

The pane's root record at the end of a capture (core/status.py's StatusBoard, as the sidecar
keeps it) must say the state the capture is labelled with (done and error count as idle). Where
an agent's report and its screen disagree by design, the gap is listed by the kind of capture
(`known_gaps`: kind -> (what the agent reports instead, why)), so a release that closes it (or a
new gap) shows."""
import re

from tmux_agentstate.core.status import StatusBoard

OSC_7501 = re.compile(rb"\x1b\]7501;([^\x07\x1b]*)(?:\x07|\x1b\\)")
AS_STATE = {"working": "working", "blocked": "blocked", "done": "idle", "error": "idle", "idle": "idle"}


def release(fx) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", fx.agent_version)[:3])


def root_at_end(raw: bytes):
    """The root record after every OSC 7501 payload in `raw`, in order (None: no report)."""
    board = StatusBoard()
    for n, m in enumerate(OSC_7501.finditer(raw)):
        board.take(m.group(1).decode("utf-8", "replace"), float(n))
    return board.root


def check_last_report(fx, app: str, known_gaps: dict, *, hint: str = "",
                      blocked_has_message: bool = False) -> None:
    """The capture's last root report names `app` and says its labelled state (or its known gap)."""
    root = root_at_end(fx.path.read_bytes())
    assert root is not None, f"{fx.id}: no OSC 7501 root record in the bytes{hint}"
    assert root.status.app == app, root.status
    said = AS_STATE[root.status.state]
    if fx.kind in known_gaps and fx.state == "blocked":
        assert said == known_gaps[fx.kind][0], f"{fx.id}: the known gap changed: {app} says {root.status}"
        return
    assert said == fx.state, f"{fx.id} ({fx.kind}): {app} says {root.status}, the screen is {fx.state}"
    if blocked_has_message and said == "blocked":
        assert root.status.message, root.status
