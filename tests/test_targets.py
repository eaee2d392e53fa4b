"""Typing reaches only the pane the user named. tmux's own target lookup falls back to a
current pane (`send demo:9.9 …` once typed into %0); every subcommand that takes a pane must
refuse a missing, dead or ambiguous one with one line, a non-zero exit, no traceback, and
nothing typed anywhere."""
import os
import subprocess
import sys
import time

import pytest

from conftest import wait_for

CANARY = "TYPED-INTO-THE-WRONG-PANE"


def cli(srv, *args, tmp_path=None):
    env = dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path))
    env.pop("TMUX", None)
    return subprocess.run([sys.executable, "-m", "tmux_agentstate", *args, "-L", srv.name],
                          capture_output=True, text=True, env=env, timeout=30)


@pytest.fixture
def panes(tmux_server):
    """main: window 0 with two panes; two windows both named 'twin'; a dead pane kept by
    remain-on-exit. Every live pane runs a shell whose screen would show typed text."""
    srv = tmux_server
    srv.cmd("split-window", "-t", "main:0")
    for _ in range(2):
        srv.cmd("new-window", "-d", "-t", "main", "-n", "twin")
    dead = srv.cmd("new-window", "-d", "-t", "main", "-n", "gone", "-P", "-F", "#{pane_id}",
                   "sh -c 'sleep 0.5; exit 3'")
    srv.cmd("set-option", "-w", "-t", dead, "remain-on-exit", "on")
    wait_for(lambda: srv.cmd("display-message", "-p", "-t", dead, "#{pane_dead}") == "1",
             message="dead")
    return srv, dead


def nothing_typed(srv) -> bool:
    return all(CANARY not in srv.cmd("capture-pane", "-p", "-t", p)
               for p in srv.cmd("list-panes", "-a", "-F", "#{pane_id}").split())


BAD_TARGETS = ["%999", "main:9.9", "main:9", "nosuch:0.0", "main:0", "main:twin", "main:0.7",
               "main", "{marked}", "", "main:0.0.0"]


@pytest.mark.parametrize("target", BAD_TARGETS)
def test_every_pane_subcommand_refuses_a_bad_target_and_types_nothing(panes, tmp_path, target):
    srv, _ = panes
    for args in (["send", target, f"echo {CANARY}"], ["answer", target, "yes"],
                 ["explain", target], ["record", target, str(tmp_path / "out.raw"), "--seconds", "0.5"]):
        out = cli(srv, *args, tmp_path=tmp_path)
        assert out.returncode != 0, (args, out.stdout)
        assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1, (args, out.stderr)
    time.sleep(0.3)
    assert nothing_typed(srv)


def test_a_dead_pane_is_named_but_never_typed_into(panes, tmp_path):
    srv, dead = panes
    for args in (["send", dead, f"echo {CANARY}"], ["answer", dead, "yes"]):
        out = cli(srv, *args, tmp_path=tmp_path)
        assert out.returncode != 0 and "Traceback" not in out.stderr, (args, out.stderr)
        assert len(out.stderr.strip().splitlines()) == 1
    assert cli(srv, "explain", dead, tmp_path=tmp_path).returncode == 0  # looking is fine
    assert nothing_typed(srv)


def test_an_exact_target_still_works(panes, tmp_path):
    srv, _ = panes
    pane = srv.cmd("display-message", "-p", "-t", "main:0.1", "#{pane_id}")
    out = cli(srv, "send", "main:0.1", f"echo {CANARY}", tmp_path=tmp_path)
    assert out.returncode == 0, out.stderr
    wait_for(lambda: CANARY in srv.cmd("capture-pane", "-p", "-t", pane), message="typed")
    other = srv.cmd("display-message", "-p", "-t", "main:0.0", "#{pane_id}")
    assert CANARY not in srv.cmd("capture-pane", "-p", "-t", other)


def test_every_subcommand_without_a_server_is_one_line(tmp_path):
    env = dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path))
    env.pop("TMUX", None)
    for args in (["status"], ["stop"], ["start"], ["list"], ["explain", "%1"], ["send", "%1", "x"],
                 ["answer", "%1", "yes"], ["record", "%1", str(tmp_path / "o")], ["doctor"],
                 ["popup"]):
        out = subprocess.run([sys.executable, "-m", "tmux_agentstate", *args, "-L",
                              "agentstate-no-such-server"], capture_output=True, text=True,
                             env=env, timeout=30, stdin=subprocess.DEVNULL)
        assert out.returncode != 0, (args, out.stdout)
        assert "Traceback" not in out.stderr, (args, out.stderr)
