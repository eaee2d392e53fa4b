"""A pane that prints on and on has its pipe handed to the sidecar (sidecar/handoff.py): tmux
writes into a socket the sidecar reads, no `cat` between. What is checked: the `cat` goes and
the pane is still read right; another program's pipe still wins; a hand-over that cannot
happen leaves the pane its `cat`; a descriptor nobody asked for is never read."""
from __future__ import annotations

import os
import shlex
import socket
import subprocess

import psutil
import pytest

from conftest import wait_for
from tmux_agentstate.sidecar.handoff import Handoff

# a Claude Code spinner redrawn every 50 ms for `frames` frames, then its permission dialog
SPINNER = ("i=0; while [ $i -lt {frames} ]; do "
           "printf '\\r✻ Thinking… (%ss · esc to interrupt)\\033[K' $((i / 20)); "
           "i=$((i + 1)); sleep 0.05; done; "
           "printf '\\r\\033[KDo you want to proceed?\\n ❯ 1. Yes\\n   2. No\\n'; exec sleep 600")


def agent_pane(tmux_server, frames: int) -> str:
    return tmux_server.new_pane("sh -c " + shlex.quote(SPINNER.format(frames=frames)), rows=20,
                                cols=100, env={"AGENTSTATE_AGENT": "claude"})


def pipe_children(tmux_server) -> list[str]:
    """The command lines of the tmux server's children that are no pane: `pipe-pane`s."""
    server = psutil.Process(int(tmux_server.cmd("display-message", "-p", "#{pid}")))
    panes = {int(p) for p in tmux_server.cmd("list-panes", "-a", "-F", "#{pane_pid}").split()}
    out = []
    for child in server.children():
        if child.pid not in panes:
            try:
                out.append(" ".join(child.cmdline()))
            except psutil.Error:
                pass
    return out


@pytest.mark.parametrize("intake", ["emulate", "pipe"])
def test_a_pane_that_prints_on_and_on_loses_its_cat_and_is_still_read(tmux_server, sidecar, intake):
    sc = sidecar(intake=intake).start()
    pane = agent_pane(tmux_server, frames=200)  # 10 s of spinner, then the prompt
    wait_for(lambda: tmux_server.state(pane) == "working", message="working")
    assert "cat" in pipe_children(tmux_server)  # at first, a cat (`exec cat > FIFO`)
    wait_for(lambda: not pipe_children(tmux_server), timeout=8, message="the cat gone")
    assert tmux_server.cmd("display-message", "-p", "-t", pane, "#{pane_pipe}") == "1"
    assert tmux_server.option(pane, "@agentstate_pipe").startswith(str(sc.runtime_dir()))
    assert tmux_server.state(pane) == "working"
    wait_for(lambda: tmux_server.state(pane) == "blocked", timeout=15, message="its prompt")
    assert not pipe_children(tmux_server)


def test_another_programs_pipe_on_a_handed_over_pane_is_kept(tmux_server, sidecar, tmp_path):
    log = tmp_path / "their.log"
    sidecar(intake="emulate").start()
    pane = agent_pane(tmux_server, frames=300)
    wait_for(lambda: tmux_server.state(pane) == "working", message="working")
    wait_for(lambda: not pipe_children(tmux_server), timeout=8, message="handed over")
    tmux_server.cmd("pipe-pane", "-O", "-t", pane, f"cat >> {log}")  # e.g. tmux-logging
    wait_for(lambda: tmux_server.option(pane, "@agentstate_pipe") == "", timeout=35,
             message="ours let go")
    assert log.stat().st_size > 0  # theirs got the spinner
    assert any(str(log) in c for c in pipe_children(tmux_server))
    wait_for(lambda: tmux_server.state(pane) == "blocked", timeout=20, message="still read")


def test_a_hand_over_that_cannot_happen_leaves_the_pane_its_cat(tmux_server, sidecar):
    sc = sidecar(intake="emulate").start()
    pane = agent_pane(tmux_server, frames=240)
    wait_for(lambda: tmux_server.state(pane) == "working", message="working")
    os.unlink(sc.runtime_dir() / "handoff.sock")  # a cleaner of /tmp, say: nobody to hand to
    # the hand-over is tried after ~3 s of printing, given up ~3 s later: a cat again
    wait_for(lambda: "handed over within" in (sc.runtime_dir() / "sidecar.log").read_text(),
             timeout=15, message="the failed hand-over said")
    wait_for(lambda: "cat" in pipe_children(tmux_server), message="a cat again")
    wait_for(lambda: tmux_server.state(pane) == "blocked", timeout=15, message="still read")
    assert sc.proc.poll() is None


def test_only_the_descriptor_asked_for_is_taken(tmp_path):
    handoff = Handoff(tmp_path)
    assert handoff.usable

    def hand(command: str) -> socket.socket:
        ours, theirs = socket.socketpair()
        subprocess.run(["sh", "-c", command], stdin=theirs, check=True)
        theirs.close()
        return ours

    stale = handoff.command("%3")
    fresh = handoff.command("%3")  # the pane piped again: the first command's token is old
    hand(stale)
    assert handoff.accept() == []
    writer = hand(fresh)
    [(pane, fd)] = handoff.accept()
    assert pane == "%3"
    writer.send(b"bytes")
    assert os.read(fd, 16) == b"bytes"
    os.close(fd)
    hand(fresh)  # the same token twice: taken once
    assert handoff.accept() == []
    unasked = handoff.command("%4").replace(" 4:", " 5:")  # a pane nobody asked for
    hand(unasked)
    assert handoff.accept() == []
    handoff.close()
    assert not (tmp_path / "handoff.sock").exists()
