"""scripts/osc_vs_screen.py's replay pieces (the live run is a benchmark, not a test): OSC
payloads found across chunk boundaries, and the two timelines aligned without pairing across
another move."""
import importlib.util
import sys

from conftest import ROOT

spec = importlib.util.spec_from_file_location("osc_vs_screen", ROOT / "scripts" / "osc_vs_screen.py")
ovs = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = ovs  # its dataclasses look their module up
spec.loader.exec_module(ovs)


def test_a_report_split_across_chunks_is_found_once_and_whole():
    scan = ovs.OscScanner()
    stream = b"ab\x1b]7501;state=working:app=pi\x1b\\cd\x1b]0;title\x07\x1b]7501;state=blocked:app=pi\x07"
    for cut in range(1, len(stream)):
        scan = ovs.OscScanner()
        got = scan.feed(stream[:cut]) + scan.feed(stream[cut:])
        assert got == ["state=working:app=pi", "state=blocked:app=pi"], cut


def test_a_screen_move_after_another_is_not_paired_with_an_earlier_report():
    S = ovs.Step
    # pi: the report stays `working` while the question picker (no report) is up
    osc = [S(0.0, "idle", ""), S(1.0, "working", ""), S(4.0, "idle", "")]
    scr = [S(0.0, "idle", ""), S(1.02, "blocked", ""), S(2.5, "working", ""), S(4.01, "idle", "")]
    pairs = [(o and o.at, s and s.at) for o, s in ovs.pair(osc, scr)]
    assert pairs == [(0.0, 0.0), (1.0, None), (None, 1.02), (None, 2.5), (4.0, 4.01)]


def test_flicker_shorter_than_the_threshold_is_no_transition():
    S = ovs.Step
    steps = [S(0.0, "idle", ""), S(1.0, "working", ""), S(1.05, "idle", ""), S(3.0, "working", "")]
    assert [(s.at, s.state) for s in ovs.steady(steps, 5.0)] == [(0.0, "idle"), (3.0, "working")]
