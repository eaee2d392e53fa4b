"""The tmux adapter against a real server with enough panes that ids reach %10."""
from conftest import wait_for


def test_batched_captures_come_back_under_their_own_pane_ids(tmux_server):
    panes = [tmux_server.new_pane(f"sh -c 'echo screen-of-{i}; exec sleep 600'", rows=5, cols=30)
             for i in range(11)]
    assert "%10" in panes
    for p in panes:
        wait_for(lambda: "screen-of" in tmux_server.cmd("capture-pane", "-p", "-t", p), message=p)
    listed, _, screens = tmux_server.tmux.listing(panes)
    assert set(screens) == set(panes)
    for i, p in enumerate(panes):
        assert screens[p].splitlines()[0] == f"screen-of-{i}"
    escaped = tmux_server.tmux.capture(panes)
    assert set(escaped) == set(panes) and "screen-of-10" in escaped[panes[10]]
    assert {p.pane_id for p in listed} >= set(panes)
