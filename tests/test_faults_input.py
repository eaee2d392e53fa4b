"""Issue 25, item 5: the watcher never dies or freezes on input it reads. Each fault is put in
front of a real sidecar watching a real tmux: the agent's own files made hostile, a full
disk under the runtime folder, an fd limit below the panes' needs, more panes than one tmux
command line holds, a sidecar that dies in its first second. After each: the sidecar is
alive, every agent pane has its state, nothing reached the log as a traceback."""
import json
import os
import shlex
import signal
import subprocess
import sys
import time

import pytest

from conftest import replay_command, wait_for
from tmux_agentstate.core.fixtures import load_index

FIXTURES = load_index()
SESSION_ID = "0123abcd-4567-89ef-0123-456789abcdef"
CWD = "/work/project"


def pick(state, agent):
    return next(f for f in FIXTURES if f.state == state and f.agent == agent)


def no_traceback(sc) -> bool:
    log = sc.runtime_dir() / "sidecar.log"
    return not log.exists() or "Traceback" not in log.read_text(errors="replace")


# -- the agent's own files -----------------------------------------------------------------------
def _fifo(path):
    os.mkfifo(path)


def _dev_zero(path):
    os.symlink("/dev/zero", path)


def _symlink_to_fifo(path):
    os.mkfifo(str(path) + ".real")
    os.symlink(str(path) + ".real", path)


def _deep_json(path):
    path.write_text("[" * 200_000 + "]" * 200_000 + "\n")


def _deep_json_lines(path):
    path.write_text('{"type": "assistant", "message": ' + "[" * 100_000 + "\n" + "{" * 100_000 + "\n")


def _huge(path):
    with open(path, "wb") as f:  # sparse: GBs to read, no disk used
        f.truncate(6 << 30)


def _not_utf8(path):
    path.write_bytes(b'{"status": "\xff\xfe\xfa", "x": "' + os.urandom(3000) + b'"}\n')


HOSTILE = {"fifo": _fifo, "dev-zero": _dev_zero, "symlink-to-fifo": _symlink_to_fifo,
           "deep-json": _deep_json, "deep-json-lines": _deep_json_lines, "huge": _huge,
           "not-utf8": _not_utf8}


@pytest.mark.parametrize("which", ["session", "transcript"])
@pytest.mark.parametrize("kind", list(HOSTILE))
def test_hostile_session_or_transcript_file(tmux_server, sidecar, tmp_path, which, kind):
    """Claude's `~/.claude/sessions/<pid>.json` (read each sweep) or the transcript it names
    (read for the context in use) is a FIFO, a device, GBs, nested too deep for a parser,
    not UTF-8: the pane is still watched, and the sidecar goes on watching new panes."""
    home = tmp_path / "home"
    (home / ".claude" / "sessions").mkdir(parents=True)
    transcripts = home / ".claude" / "projects" / CWD.replace("/", "-")
    transcripts.mkdir(parents=True)
    hostile = tmp_path / "hostile"
    HOSTILE[kind](hostile)
    if which == "session":  # named by the agent's pid: the pane moves it into place itself
        place = f"mv {shlex.quote(str(hostile))} \"$HOME/.claude/sessions/$$.json\""
    else:
        os.rename(hostile, transcripts / f"{SESSION_ID}.jsonl")
        if os.path.exists(str(hostile) + ".real"):
            os.rename(str(hostile) + ".real", str(transcripts / f"{SESSION_ID}.jsonl") + ".real")
        session = json.dumps({"pid": 0, "sessionId": SESSION_ID, "cwd": CWD, "status": "busy"})
        place = f"printf %s {shlex.quote(session)} > \"$HOME/.claude/sessions/$$.json\""
    fx = pick("blocked", "claude")
    sc = sidecar(intake="emulate").start()
    pane = tmux_server.new_pane(
        f"env HOME={shlex.quote(str(home))} AGENTSTATE_AGENT=claude sh -c "
        + shlex.quote(f"stty -echo; {place}; sleep 0.3; cat {shlex.quote(str(fx.path))}; exec sleep 600"),
        rows=fx.rows, cols=fx.cols)
    wait_for(lambda: tmux_server.state(pane) == "blocked", timeout=20, message="the pane watched")
    # not frozen: a pane that comes later is watched too, and the sweeps go on
    later = pick("idle", "codex")
    other = tmux_server.new_pane(replay_command(later.path, "codex"), rows=later.rows, cols=later.cols)
    wait_for(lambda: tmux_server.state(other) == "idle", timeout=20, message="a later pane watched")
    sweeps = (sc.status() or {}).get("sweeps", 0)
    wait_for(lambda: (sc.status() or {}).get("sweeps", 0) > sweeps, message="sweeps go on")
    assert sc.proc.poll() is None
    assert no_traceback(sc)
