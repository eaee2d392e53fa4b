"""`record PANE FILE`: a pane's raw bytes into a file that replays to what the pane showed."""
import signal
import subprocess
import sys

from conftest import replay_command, wait_for
from tmux_agentstate.core.fixtures import load_index
from tmux_agentstate.core.screen import replay

FIXTURES = load_index()


def start_record(server, *args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tmux_agentstate", "record", "-L", server.name,
                             *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def record(server, *args, timeout=30):
    proc = start_record(server, *args)
    out, err = proc.communicate(timeout=timeout)
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


def test_recording_started_mid_session_replays_to_the_panes_screen(tmux_server, tmp_path):
    """Seeded with the screen already drawn, then the bytes printed while recording: the file
    replays to tmux's own screen, and classifies as the agent's true state."""
    fx = next(f for f in FIXTURES if f.agent == "claude" and f.state == "blocked")
    gate = tmp_path / "go"
    pane = tmux_server.new_pane(
        f"sh -c 'printf \"before the recording\\n\"; while [ ! -e {gate} ]; do sleep 0.05; done; "
        f"cat {fx.path}; exec sleep 600'", rows=fx.rows, cols=fx.cols)
    wait_for(lambda: "before the recording" in tmux_server.cmd("capture-pane", "-p", "-t", pane), message="text")
    out = tmp_path / "rec.raw"
    proc = start_record(tmux_server, pane, str(out))
    wait_for(lambda: tmux_server.option(pane, "pane_pipe") == "1", message="recording")
    gate.touch()
    # Ctrl-C only once every byte went through the pipe: closing a pipe drops what tmux has
    # not yet written to it (a fixed --seconds lost the tail on a loaded machine)
    wait_for(lambda: tmux_server.option(pane, "pane_current_command") == "sleep", message="printed")
    sizes = []
    wait_for(lambda: sizes.append(out.stat().st_size) or sizes[-3:] == [sizes[-1]] * 3,
             interval=0.2, message="the recording stops growing")
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0, stderr
    assert f"--size {fx.rows}x{fx.cols}" in stdout
    assert tmux_server.option(pane, "pane_pipe") == "0"  # no pipe left behind, no mark
    assert tmux_server.option(pane, "@agentstate_recording") == ""
    data = out.read_bytes()
    # the pane's own stream (the tty adds \r to the fixture's \n): all of it, after the seed
    assert data.startswith(b"\x1b]2;") and len(data) > fx.path.stat().st_size
    assert fx.path.read_bytes()[:64] in data
    screen = replay(data, fx.rows, fx.cols)
    tmux_rows = tmux_server.tmux.capture_one(pane, escapes=False)[pane].split("\n")
    assert [r.rstrip() for r in screen.rows()][:len(tmux_rows)] == [r.rstrip() for r in tmux_rows], (data[:300], tmux_server.cmd("display", "-p", "-t", pane, "#{cursor_y} #{history_size}"))
    cli = subprocess.run([sys.executable, "-m", "tmux_agentstate", "classify", "--size",
                          f"{fx.rows}x{fx.cols}", "--agent", "claude", str(out)],
                         capture_output=True, text=True)
    assert cli.returncode == 0 and "blocked" in cli.stdout, cli.stdout + cli.stderr


def test_recording_keeps_the_sidecars_pipe_fed_and_hands_it_back(tmux_server, sidecar, tmp_path):
    fx = next(f for f in FIXTURES if f.agent == "claude" and f.state == "blocked")
    sidecar().start()
    pane = tmux_server.new_pane(replay_command(fx.path, "claude",
                                               "read x; printf '\\033[2Janswered'; exec sleep 600"),
                                rows=fx.rows, cols=fx.cols)
    wait_for(lambda: tmux_server.state(pane) == "blocked", message="blocked")
    fifo = tmux_server.option(pane, "@agentstate_pipe")
    assert fifo
    out = tmp_path / "rec.raw"
    proc = start_record(tmux_server, pane, str(out), "--seconds", "2.5", "--no-seed")
    wait_for(lambda: tmux_server.option(pane, "@agentstate_recording"), message="recording")
    tmux_server.cmd("send-keys", "-t", pane, "Enter")  # answers `read x`: the screen is cleared…
    wait_for(lambda: "answered" in tmux_server.cmd("capture-pane", "-p", "-t", pane), message="answered")
    tmux_server.cmd("send-keys", "-t", pane, "C-c")
    proc.communicate(timeout=30)
    assert proc.returncode == 0
    # …the sidecar saw it through its own pipe while the recording ran, and keeps its pipe after
    wait_for(lambda: tmux_server.state(pane) == "", message="agent gone: options unset")
    assert b"answered" in out.read_bytes()


def test_recording_never_replaces_another_programs_pipe(tmux_server, tmp_path):
    pane = tmux_server.new_pane("sh -c 'exec sleep 600'")
    theirs = tmp_path / "their.log"
    tmux_server.cmd("pipe-pane", "-O", "-t", pane, f"cat >> {theirs}")
    out = record(tmux_server, pane, str(tmp_path / "rec.raw"), "--seconds", "1")
    assert out.returncode != 0 and "another program" in out.stderr and len(out.stderr.splitlines()) == 1
    assert tmux_server.option(pane, "pane_pipe") == "1"
    assert not (tmp_path / "rec.raw").exists()
