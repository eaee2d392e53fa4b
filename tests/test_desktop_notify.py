"""Desktop notifications through the user's terminal (`@agentstate-notify-terminal`): a real
tmux client attached in a pseudo-terminal of the test's; the bytes written to that terminal
must hold the notification, of the kind asked for or the one its terminal takes (auto), and
nothing for `off`, for an unknown terminal, or for a client that shows the pane already."""
import re
import time

import pytest

from conftest import wait_for
from tmux_agentstate.core.fixtures import load_index
from tmux_agentstate.sidecar import desktop

BLOCKED = next(f for f in load_index() if f.agent == "claude" and f.state == "blocked"
               and f.kind == "command-approval")
ANY_NOTIFICATION = re.compile(rb"\x1b\](?:9|777|99);")


def held_agent(tmux_server, go):
    """An agent pane in a session of its own (no client shows it) that draws its prompt when
    `go` appears."""
    held = f"while [ ! -e {go} ]; do sleep 0.05; done; cat {BLOCKED.path}; exec sleep 600"
    return tmux_server.new_pane(f"env AGENTSTATE_AGENT=claude sh -c '{held}'",
                                rows=BLOCKED.rows, cols=BLOCKED.cols)


def until_blocked(tmux_server, sidecar, pane, go):
    sidecar(interval=0.3).start()
    time.sleep(1.0)  # the sidecar watches the pane before its prompt comes
    go.touch()
    wait_for(lambda: tmux_server.state(pane) == "blocked", message="blocked")
    return tmux_server.option(pane, "@agentstate_detail").replace("##", "#")


CASES = {  # setting, client TERM, what its terminal answers to XTVERSION → expected prefix
    "osc9": ("osc9", "xterm-256color", None, b"\x1b]9;Claude Code in "),
    "osc777": ("osc777", "xterm-256color", None, b"\x1b]777;notify;Claude Code in "),
    "osc99": ("osc99", "xterm-256color", None, b"\x1b]99;i=agentstate-"),
    "auto, kitty": ("auto", "xterm-256color", "kitty(0.35.2)", b"\x1b]99;i=agentstate-"),
    "auto, WezTerm": ("auto", "xterm-256color", "WezTerm 20240203-110809-5046fc22", b"\x1b]9;Claude Code in "),
    "auto, foot": ("auto", "xterm-256color", "foot(1.17.2)", b"\x1b]777;notify;Claude Code in "),
    "osc9 in a nested tmux": ("osc9", "tmux-256color", "tmux 3.3a", b"\x1bPtmux;\x1b\x1b]9;Claude Code in "),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_clients_terminal_receives_the_notification(tmux_server, sidecar, pty_client, tmp_path, case):
    setting, term, terminal, prefix = CASES[case]
    tmux_server.cmd("set-option", "-g", "@agentstate-notify-terminal", setting)
    go = tmp_path / "go"
    pane = held_agent(tmux_server, go)
    client = pty_client("main", term=term, terminal=terminal)
    line = until_blocked(tmux_server, sidecar, pane, go)
    address = tmux_server.cmd("display-message", "-p", "-t", pane,
                              "#{session_name}:#{window_index}.#{pane_index}")
    wait_for(lambda: prefix in client.output(), message=f"{prefix!r} in the client's bytes")
    out = client.output()
    seq = out[out.index(prefix):]
    # the pane's address, the agent, and the prompt line (control characters dropped)
    assert f"Claude Code in {address} needs you".encode() in seq[:300]
    assert desktop.clean(line)[:40].encode() in seq[:600]


@pytest.mark.parametrize("setting, terminal", [("off", "kitty(0.35.2)"), ("auto", None)],
                         ids=["off", "auto, a terminal that does not say what it is"])
def test_nothing_is_written_for_off_or_a_terminal_auto_cannot_tell(tmux_server, sidecar, pty_client,
                                                                   tmp_path, setting, terminal):
    tmux_server.cmd("set-option", "-g", "@agentstate-notify-terminal", setting)
    tmux_server.cmd("set-option", "-g", "@agentstate-notify-bell", "off")
    go = tmp_path / "go"
    pane = held_agent(tmux_server, go)
    client = pty_client("main", terminal=terminal)
    until_blocked(tmux_server, sidecar, pane, go)
    # the same notification's tmux message reaches the client: the moment has passed
    wait_for(lambda: b"needs you" in client.output(), message="the tmux message")
    time.sleep(0.5)
    assert not ANY_NOTIFICATION.search(client.output())
    assert b"\x07" not in client.output()  # and no bell either (turned off)


def test_a_client_that_shows_the_pane_is_not_told(tmux_server, sidecar, pty_client, tmp_path):
    """The agent's pane is on the looking client's screen but not its active pane (a split):
    not "seen", so it is announced, but only to the client that has it off screen."""
    tmux_server.cmd("set-option", "-g", "@agentstate-notify-terminal", "osc9")
    go = tmp_path / "go"
    held = f"while [ ! -e {go} ]; do sleep 0.05; done; cat {BLOCKED.path}; exec sleep 600"
    rows, cols = BLOCKED.rows, BLOCKED.cols
    pane = tmux_server.new_pane(f"env AGENTSTATE_AGENT=claude sh -c '{held}'", rows=rows, cols=2 * cols + 1)
    shell = tmux_server.cmd("split-window", "-h", "-d", "-t", pane, "-l", str(cols), "-P", "-F",
                            "#{pane_id}", "sleep 600")
    tmux_server.cmd("select-pane", "-t", shell)
    session = tmux_server.cmd("display-message", "-p", "-t", pane, "#{session_name}")
    looking = pty_client(session, cols=2 * cols + 1, rows=rows + 1)
    away = pty_client("main")
    until_blocked(tmux_server, sidecar, pane, go)
    wait_for(lambda: b"\x1b]9;" in away.output(), message="the client that does not show it told")
    time.sleep(0.3)
    assert tmux_server.option(pane, "@agentstate_seen") == "0"
    assert not ANY_NOTIFICATION.search(looking.output())


# -- the sequences themselves (pure) ----------------------------------------------------------
def test_pane_text_cannot_end_the_sequence_or_start_another():
    hostile = "Allow \x1b]0;pwned\x07 rm -rf /\x1b\\ \x9c\x1b[2J?"
    for kind in ("osc9", "osc777", "osc99"):
        seq = desktop.sequence(kind, "Claude Code in a:1.0 needs you", hostile)
        body = seq[seq.index(b";") + 1:]
        terminators = body.count(b"\x07") + body.count(b"\x1b\\")
        assert terminators == (1 if kind != "osc99" else 2), (kind, seq)
        assert b"\x1b]0;" not in seq and b"\x1b[" not in seq and "\x9c".encode() not in seq
    assert b"pwned" in desktop.sequence("osc9", "t", hostile)  # text kept, controls dropped


def test_auto_picks_from_what_the_terminal_says_and_stays_quiet_when_it_cannot_tell():
    assert desktop.choose("auto", "xterm-kitty", "") == ("osc99", False)
    assert desktop.choose("auto", "xterm-256color", "iTerm2 3.5.4") == ("osc9", False)
    assert desktop.choose("auto", "xterm-ghostty", "") == ("osc9", False)
    assert desktop.choose("auto", "rxvt-unicode-256color", "") == ("osc777", False)
    assert desktop.choose("auto", "xterm-256color", "") == (None, False)
    assert desktop.choose("auto", "tmux-256color", "tmux 3.3a") == (None, False)
    assert desktop.choose("osc777", "screen-256color", "") == ("osc777", True)
    assert desktop.choose("nonsense", "xterm-kitty", "kitty") == (None, False)
    assert desktop.for_client("off", "xterm-kitty", "kitty", "t", "b") == b""
