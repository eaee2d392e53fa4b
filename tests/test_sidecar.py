"""The sidecar against a real tmux server (private socket per test) and real captured bytes."""
import shlex
import signal
import sys
import time

import pytest

from conftest import replay_command, wait_for
from tmux_agentstate.core.fixtures import load_index

FIXTURES = load_index()


def pick(state, agent):
    return next((f for f in FIXTURES if f.state == state and f.agent == agent), None)


CASES = [(s, a) for a in ("claude", "codex") for s in ("blocked", "working", "idle") if pick(s, a)]


@pytest.mark.parametrize("intake", ["pipe", "emulate", "capture"])
@pytest.mark.parametrize("state, agent", CASES, ids=[f"{a}-{s}" for s, a in CASES])
def test_replayed_capture_reaches_its_true_state(tmux_server, sidecar, state, agent, intake):
    fx = pick(state, agent)
    sidecar(intake=intake).start()
    pane = tmux_server.new_pane(replay_command(fx.path, agent), rows=fx.rows, cols=fx.cols)
    wait_for(lambda: tmux_server.state(pane) == state, message=f"{fx.id} → {state}")
    time.sleep(1.0)  # and it stays there
    assert tmux_server.state(pane) == state
    assert tmux_server.option(pane, "@agentstate_agent") == agent
    assert tmux_server.option(pane, "@agentstate_source") == "screen"
    assert tmux_server.option(pane, "@agentstate_since").isdigit()
    window = tmux_server.cmd("display-message", "-p", "-t", pane, "#{window_id}")
    assert tmux_server.cmd("show-options", "-wqv", "-t", window, "@agentstate_window") == state
    assert "1" in tmux_server.cmd("show-options", "-gqv", "@agentstate_summary")


def test_plain_shell_panes_get_no_state_and_no_pipe(tmux_server, sidecar):
    sc = sidecar().start()
    pane = tmux_server.new_pane("sh -c 'echo Do you want to proceed?; exec sleep 600'")
    wait_for(lambda: (sc.status() or {}).get("pid") == sc.proc.pid, message="a sweep")
    time.sleep(0.8)
    assert tmux_server.state(pane) == ""
    assert tmux_server.option(pane, "pane_pipe") == "0"


def test_agent_exit_unsets_options_and_pane_kill_removes_fifo(tmux_server, sidecar):
    fx = pick("blocked", "claude")
    sc = sidecar().start()
    pane = tmux_server.new_pane(rows=fx.rows, cols=fx.cols)  # an interactive shell
    # like a real agent on exit: reset the terminal modes the capture turned on (kitty keys…)
    # and drop tmux's answers to the capture's terminal queries, which nobody read
    exit_cleanly = ("sleep 2; printf '\\033c'; "
                    "python3 -c 'import termios; termios.tcflush(0, termios.TCIFLUSH)'")
    tmux_server.cmd("send-keys", "-t", pane, replay_command(fx.path, "claude", exit_cleanly), "Enter")
    wait_for(lambda: tmux_server.state(pane) == "blocked", message="blocked")
    fifo = sc.runtime_dir() / f"pane-{pane.lstrip('%')}.fifo"
    assert fifo.exists() and tmux_server.option(pane, "pane_pipe") == "1"
    # the agent exits, the shell is back in front: the prompt is still on screen, state is gone
    wait_for(lambda: tmux_server.state(pane) == "", timeout=10, message="options unset")
    assert tmux_server.option(pane, "@agentstate_agent") == ""
    assert tmux_server.option(pane, "pane_pipe") == "0"
    assert not fifo.exists()
    # an agent again, then the pane is killed
    tmux_server.cmd("send-keys", "-t", pane, replay_command(fx.path, "claude"), "Enter")
    wait_for(lambda: tmux_server.state(pane) == "blocked", message="blocked again")
    assert fifo.exists()
    tmux_server.cmd("kill-pane", "-t", pane)
    wait_for(lambda: not fifo.exists(), message="fifo removed")


@pytest.mark.parametrize("intake", ["pipe", "emulate", "capture"])
def test_sigkill_and_restart_is_right_at_the_first_sweep(tmux_server, sidecar, intake):
    blocked, idle = pick("blocked", "claude"), pick("idle", "codex")
    sc = sidecar(intake=intake).start()
    p1 = tmux_server.new_pane(replay_command(blocked.path, "claude"), rows=blocked.rows, cols=blocked.cols)
    p2 = tmux_server.new_pane(replay_command(idle.path, "codex"), rows=idle.rows, cols=idle.cols)
    wait_for(lambda: tmux_server.state(p1) == "blocked" and tmux_server.state(p2) == "idle",
             message="both classified")
    sc.kill(signal.SIGKILL)
    # while no sidecar runs, pane 2's agent draws a prompt (and the options left say idle)
    codex_blocked = pick("blocked", "codex")
    tmux_server.cmd("respawn-pane", "-k", "-t", p2, replay_command(codex_blocked.path, "codex"))
    tmux_server.cmd("resize-window", "-t", p2, "-x", str(codex_blocked.cols), "-y", str(codex_blocked.rows))
    time.sleep(1.5)
    assert tmux_server.state(p2) == "idle"  # stale, nobody updates it
    sc2 = sidecar(intake=intake).start()
    wait_for(lambda: (sc2.status() or {}).get("pid") == sc2.proc.pid, message="first sweep")
    assert tmux_server.state(p1) == "blocked"
    assert tmux_server.state(p2) == "blocked"


# A permission dialog whose question wraps at 12 columns (not a dialog then) and fits in one
# row at 60: only tmux's reflow on a resize changes what the screen says.
WRAPPING_DIALOG = "Do you want to proceed?\\n ❯ 1. Yes\\n   2. No\\n"


def dialog_pane(tmux_server, script: str) -> str:
    """A 12x10 pane running `script` (which prints WRAPPING_DIALOG) as Claude Code."""
    return tmux_server.new_pane("sh -c " + shlex.quote(script), rows=10, cols=12,
                                env={"AGENTSTATE_AGENT": "claude"})


def resize(tmux_server, pane: str, cols: int) -> None:
    tmux_server.cmd("resize-window", "-t", pane, "-x", str(cols), "-y", "10")


@pytest.mark.parametrize("intake", ["pipe", "emulate", "capture"])
def test_a_resize_alone_reclassifies_the_reflowed_screen(tmux_server, sidecar, intake):
    """No byte is printed after the dialog: only tmux's reflow of the wrapped question into
    one row (and back) changes what the screen says."""
    pane = dialog_pane(tmux_server, f"sleep 0.3; printf '{WRAPPING_DIALOG}'; exec sleep 600")
    sidecar(intake=intake).start()
    wait_for(lambda: tmux_server.option(pane, "pane_current_command") == "sleep", message="printed")
    time.sleep(1.0)  # a few sweeps: the printed screen has been read
    assert tmux_server.state(pane) == "idle"  # the question wraps: not a dialog
    resize(tmux_server, pane, 60)
    wait_for(lambda: tmux_server.state(pane) == "blocked", message="reflowed into one row")
    resize(tmux_server, pane, 12)
    wait_for(lambda: tmux_server.state(pane) == "idle", message="wrapped again")


def test_a_resize_back_between_two_sweeps_is_seen(tmux_server, sidecar):
    """Pipe intake: the agent redraws on the first resize, so a read of screens takes the new
    size between two sweeps; the resize back prints nothing. The next sweep must still see
    that the pane's size is not the screen's."""
    pane = dialog_pane(tmux_server, f"printf '{WRAPPING_DIALOG}'; "
                                    "trap 'printf .; trap - WINCH' WINCH; while :; do sleep 0.1; done")
    sidecar(interval=3.0).start()
    wait_for(lambda: tmux_server.state(pane) == "idle", message="the wrapped question: idle")
    resize(tmux_server, pane, 60)
    wait_for(lambda: tmux_server.state(pane) == "blocked", message="read after the redraw")
    resize(tmux_server, pane, 12)
    wait_for(lambda: tmux_server.state(pane) == "idle", message="the resize back, at the next sweep")


def test_foreign_pipe_is_kept_and_pane_still_classified(tmux_server, sidecar, tmp_path):
    fx = pick("blocked", "claude")
    log = tmp_path / "their.log"
    # a plain sh to type into: no user rc files (pyenv's rehash lock once held an interactive
    # bash for 60 s) between the test and its prompt
    pane = tmux_server.new_pane("sh", rows=fx.rows, cols=fx.cols)
    tmux_server.cmd("pipe-pane", "-O", "-t", pane, f"cat >> {log}")  # e.g. tmux-logging
    tmux_server.cmd("send-keys", "-t", pane, replay_command(fx.path, "claude", "read x; echo answered; sleep 600"), "Enter")
    sidecar().start()
    wait_for(lambda: tmux_server.state(pane) == "blocked", message="blocked via capture-pane")
    size = log.stat().st_size
    tmux_server.cmd("send-keys", "-t", pane, "-l", "still-mine")
    tmux_server.cmd("send-keys", "-t", pane, "Enter")
    wait_for(lambda: log.stat().st_size > size, message="their pipe still receives output")
    assert tmux_server.option(pane, "@agentstate_pipe") == ""


def test_pane_text_cannot_run_or_restyle_in_status_line(tmux_server, sidecar, tmp_path):
    marker = tmp_path / "pwned"
    evil = (f"\x1b]0;#(touch {marker})\x07\x1b[?1049h\x1b[H"
            f"Do you want to proceed? #(touch {marker}) #[fg=red]\r\n"
            f" \u276f 1. Yes\r\n Esc to cancel \u00b7 Tab to amend")
    cap = tmp_path / "evil.raw"
    cap.write_bytes(evil.encode())
    tmux_server.cmd("set-option", "-g", "status-right", "#{@agentstate_summary}|#{@agentstate_detail}")
    # wide enough for the prompt's whole line, however long the test's tmp path is
    pane = tmux_server.new_pane(replay_command(cap, "claude"), cols=240)
    sidecar().start()
    wait_for(lambda: tmux_server.state(pane) == "blocked", message="blocked")
    detail = tmux_server.option(pane, "@agentstate_detail")
    assert f"##(touch {marker}) ##[fg=red]" in detail
    # a status line that shows our option, expanded the way tmux draws it
    expanded = tmux_server.cmd("display-message", "-p", "-t", pane, "#{E:status-right}")
    assert f"#(touch {marker})" not in expanded.replace("##", "\0")
    time.sleep(1.0)
    assert not marker.exists()


def test_an_agent_exec_d_in_place_of_the_shell_is_seen(tmux_server, sidecar):
    """`exec claude` at a prompt: the same process, the same foreground group, a new program.
    Identity must not stay cached on the group alone (it once did: no state, ever)."""
    agent = (f"exec env AGENTSTATE_AGENT=claude {sys.executable} -m tmux_agentstate.demo.fake_agent "
             "--autopilot --seed 5 --speed 2 --tasks 50")
    pane = tmux_server.new_pane(f"sh -c {shlex.quote('sleep 2; ' + agent)}")
    sidecar().start()
    time.sleep(1.0)  # listed and identified as a plain sh first
    assert tmux_server.state(pane) == ""
    wait_for(lambda: tmux_server.state(pane) in ("working", "idle", "blocked"), timeout=15,
             message="the exec'd agent identified")


def test_a_suspended_agent_is_not_in_front_until_fg(tmux_server, sidecar):
    """C-z in a real interactive shell: the shell is the terminal's foreground, the stopped
    agent (its child, in a process group of its own) is not; `fg` brings it back."""
    fx = pick("blocked", "claude")
    pane = tmux_server.new_pane(rows=fx.rows, cols=fx.cols)  # an interactive bash
    sidecar().start()
    tmux_server.cmd("send-keys", "-t", pane, replay_command(fx.path, "claude"), "Enter")
    wait_for(lambda: tmux_server.state(pane) == "blocked", message="blocked")
    tmux_server.cmd("send-keys", "-t", pane, "C-z")
    wait_for(lambda: tmux_server.state(pane) == "", message="suspended: no agent in front")
    assert tmux_server.option(pane, "@agentstate_agent") == ""
    tmux_server.cmd("send-keys", "-t", pane, "clear; fg", "Enter")
    wait_for(lambda: tmux_server.state(pane) != "", message="fg: the agent is in front again")


def test_manifest_changes_reach_panes_already_watched(tmux_server, sidecar, isolated_config):
    """Issue 10, item 2: a user manifest folder made after the sidecar started, a file added,
    edited and removed: each applies to a pane the sidecar already watches."""
    from tmux_agentstate.core.catalog import BUNDLED_DIR
    fx = pick("idle", "claude")
    pane = tmux_server.new_pane(replay_command(fx.path, "claude"), rows=fx.rows, cols=fx.cols)
    sidecar().start()
    wait_for(lambda: tmux_server.state(pane) == "idle", message="idle, by the bundled rules")
    user = isolated_config / "tmux-agentstate" / "manifests"
    user.mkdir(parents=True)  # the folder did not exist when the sidecar started
    bundled = (BUNDLED_DIR / "claude.toml").read_text()
    marker = '\n[[rules]]\nid = "test-everything-works"\nstate = "working"\nany = [\'.\']\n'
    first_rule = bundled.index("[[rules]]")
    # an override whose first non-blocked rule calls any screen working
    override = bundled[:first_rule] + marker.lstrip("\n") + "\n" + bundled[first_rule:]
    (user / "claude.toml").write_text(override)
    wait_for(lambda: tmux_server.state(pane) == "working", timeout=15, message="the new file applies")
    (user / "claude.toml").write_text(bundled)
    wait_for(lambda: tmux_server.state(pane) == "idle", timeout=15, message="the edit applies")
    (user / "claude.toml").write_text(override)
    wait_for(lambda: tmux_server.state(pane) == "working", timeout=15, message="edited again")
    (user / "claude.toml").unlink()
    wait_for(lambda: tmux_server.state(pane) == "idle", timeout=15, message="removed: bundled again")



# a program that draws with relative moves only (the cursor walks down, then back up): any
# byte parsed twice, or missed, or a cursor read at another moment than the screen, leaves
# the emulated screen out of step with tmux's for good
RELATIVE_DRAWER = r"""
import os, sys, time
w = lambda s: (os.write(1, s.encode()), time.sleep(0.001))
w("\x1b[2J\x1b[H" + "started\r\n" * 3)
end = time.monotonic() + float(sys.argv[1])
i = 0
while time.monotonic() < end:
    i += 1
    w(f"ASK-ME {i}\r\n")
    w("\x1b[1A\r\x1b[2K" + f"frame {i}")
    w("\x1b[8A\r" if i % 9 == 0 else "\x1b[1B\r")
w("\r\x1b[2Kdone\r\n")
time.sleep(600)
"""


def test_emulated_screen_seeded_mid_stream_matches_tmux(tmux_server, tmp_path, monkeypatch):
    """The emulate intake seeds a pane's screen from tmux (adopted, resized) while it draws:
    the capture, its cursor and the pipe are of one moment, so the bytes after the seed carry
    the screen on exactly as tmux does. The sidecar runs in this process to compare its
    screen with tmux's, row by row, once the drawing ends."""
    import threading

    from tmux_agentstate.core.catalog import BUNDLED_DIR, Catalog
    from tmux_agentstate.sidecar.config import Config
    from tmux_agentstate.sidecar.runtime import Runtime
    from tmux_agentstate.sidecar import Sidecar
    from tmux_agentstate.tmux import Tmux
    user = tmp_path / "manifests"
    user.mkdir()
    (user / "drawer.toml").write_text(
        'name = "drawer"\ndisplay = "Drawer"\nversion = 1\nfallback = "idle"\n'
        '[identify]\ncommands = ["no-such-drawer"]\n'
        '[[rules]]\nid = "asks"\nstate = "blocked"\nany = [\'ASK-ME\']\n')
    script = tmp_path / "drawer.py"
    script.write_text(RELATIVE_DRAWER)
    base = tmp_path / "run"
    base.mkdir(mode=0o700)
    sc = Sidecar(Tmux(socket_name=tmux_server.name),
                 Runtime(tmux_server.tmux.socket(), base=base / "tmux-agentstate").ensure(),
                 Catalog([BUNDLED_DIR, user]), Config(intake="emulate", interval=0.1))
    pane = tmux_server.new_pane(
        f"env AGENTSTATE_AGENT=drawer sh -c 'stty -echo; sleep 0.5; exec {sys.executable} {script} 6'",
        rows=20, cols=60)
    session = tmux_server.cmd("display-message", "-p", "-t", pane, "#{session_name}")
    seen = {}

    def drive():
        try:
            wait_for(lambda: pane in sc.panes, message="adopted")
            for n in range(16):  # each resize seeds the screen again, mid-drawing
                time.sleep(0.3)
                rows, cols = (16, 50) if n % 2 else (24, 70)
                tmux_server.cmd("resize-window", "-t", session, "-x", str(cols), "-y", str(rows))
            wait_for(lambda: "done" in tmux_server.cmd("capture-pane", "-p", "-t", pane),
                     timeout=15, message="the drawing ends")
            time.sleep(1.0)  # the last bytes parsed
            seen["ours"] = [r.rstrip() for r in sc.panes[pane].screen.rows()]
            seen["tmux"] = [r.rstrip() for r in tmux_server.cmd("capture-pane", "-p", "-t", pane).split("\n")]
        finally:
            sc.stop()

    driver = threading.Thread(target=drive)
    driver.start()
    sc.run()
    driver.join()
    assert seen["ours"][:len(seen["tmux"])] == seen["tmux"]


def test_a_slow_user_rule_cannot_hang_the_sidecar(tmux_server, sidecar, isolated_config, tmp_path):
    """Issue 10, item 5: a user rule that backtracks for minutes on its pane's screen is
    disabled after one search over budget, with one line naming file and rule (log, status,
    doctor); that pane keeps its later rules, other panes keep updating, and `stop` is prompt."""
    import subprocess
    user = isolated_config / "tmux-agentstate" / "manifests"
    user.mkdir(parents=True)
    (user / "slowpoke.toml").write_text(
        'name = "slowpoke"\n[identify]\ncommands = ["no-such-slowpoke"]\n'
        '[[rules]]\nid = "nested-repeat"\nstate = "blocked"\nany = [\'(a|aa)+$\']\n'
        '[[rules]]\nid = "busy"\nstate = "working"\nany = [\'WORKING\']\n')
    rows = tmp_path / "rows.raw"
    rows.write_bytes(("a" * 70 + "!\r\n").encode() * 20 + b"WORKING")
    sc = sidecar(intake="emulate")
    sc.env["XDG_CONFIG_HOME"] = str(isolated_config)
    sc.start()
    slow = tmux_server.new_pane(replay_command(rows, "slowpoke"), rows=24, cols=80)
    wait_for(lambda: tmux_server.state(slow) == "working", timeout=15, message="its later rule")
    fx = pick("blocked", "claude")
    other = tmux_server.new_pane(replay_command(fx.path, "claude"), rows=fx.rows, cols=fx.cols)
    wait_for(lambda: tmux_server.state(other) == "blocked", message="another pane still updates")
    wait_for(lambda: (sc.status() or {}).get("rule_faults"), message="status names the fault")
    faults = sc.status()["rule_faults"]
    assert len(faults) == 1 and "slowpoke.toml: rule 'nested-repeat': disabled" in faults[0]
    env = dict(sc.env)
    doctor = subprocess.run([sys.executable, "-m", "tmux_agentstate", "doctor", "-L", tmux_server.name],
                            capture_output=True, text=True, env=env, timeout=60)
    assert "rule 'nested-repeat': disabled" in doctor.stdout
    log = (sc.runtime_dir() / "sidecar.log").read_text()
    assert log.count("'nested-repeat': disabled") == 1 and "Traceback" not in log
    t = time.monotonic()
    sc.proc.send_signal(signal.SIGTERM)
    sc.proc.wait(10)
    assert time.monotonic() - t < 3  # it was never stuck in a search


COSTLY_FLOOD = r"""
import os, sys, time
os.write(1, b"\x1b[4h")  # insert mode: every character shifts its row
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    os.write(1, b"a\x07" * 5000)  # one character per draw: the costliest way to fill a row
os.write(1, b"\x1b[4l\x1b[2J\x1b[H")
os.write(1, open(sys.argv[2], "rb").read())
time.sleep(600)
"""


def test_costly_output_in_one_pane_does_not_lag_the_others(tmux_server, sidecar, tmp_path):
    """Issue 10, item 6: bytes that are cheap for tmux but costly to parse (insert mode, one
    character at a time) are a flood by parsing time, not only by size: that pane's screen is
    read from tmux every sweep meanwhile, so a prompt in another pane is seen at once (it
    lagged by seconds), and the flooding pane's own prompt after it is seen too."""
    fx = pick("blocked", "claude")
    script = tmp_path / "flood.py"
    script.write_text(COSTLY_FLOOD)
    sc = sidecar(intake="emulate").start()
    flood = tmux_server.new_pane(
        f"env AGENTSTATE_AGENT=claude sh -c 'stty -echo; exec {sys.executable} {script} 8 {fx.path}'",
        rows=fx.rows, cols=fx.cols)
    wait_for(lambda: tmux_server.option(flood, "@agentstate_agent") == "claude", message="adopted")
    time.sleep(1.5)  # the flood is under way
    other = tmux_server.new_pane(replay_command(fx.path, "claude"), rows=fx.rows, cols=fx.cols)
    wait_for(lambda: tmux_server.state(other) == "blocked", timeout=4,
             message="another pane's prompt, during the flood")
    wait_for(lambda: tmux_server.state(flood) == "blocked", timeout=20,
             message="the flooding pane's own prompt, after it")
    assert "flood" in (sc.runtime_dir() / "sidecar.log").read_text()


@pytest.mark.parametrize("intake", ["emulate", "pipe"])
@pytest.mark.parametrize("how", ["replace", "toggle"])
def test_another_programs_pipe_after_adoption_is_never_replaced(tmux_server, sidecar, tmp_path,
                                                                intake, how):
    """Issue 10, item 4: another program pipes a pane we already pipe (`pipe-pane -O`), or
    toggles with `-o` (which closes ours and opens nothing: their second toggle opens theirs).
    We never take the pane back, and read its screen from tmux: its prompt is still seen
    (was frozen), and their pipe gets the output."""
    fx = pick("blocked", "claude")
    log = tmp_path / "their.log"
    sc = sidecar(intake=intake).start()
    pane = tmux_server.new_pane(
        f"env AGENTSTATE_AGENT=claude sh -c 'stty -echo; echo started; read x; cat {fx.path}; "
        f"exec sleep 600'", rows=fx.rows, cols=fx.cols)
    wait_for(lambda: tmux_server.option(pane, "@agentstate_pipe"), message="our pipe on")
    time.sleep(1.5)  # settled: our pipe's process runs
    if how == "replace":
        tmux_server.cmd("pipe-pane", "-O", "-t", pane, f"cat >> {log}")
    else:
        tmux_server.cmd("pipe-pane", "-o", "-t", pane, f"cat >> {log}")  # closes ours only
        wait_for(lambda: tmux_server.option(pane, "@agentstate_pipe") == "", message="let go")
        tmux_server.cmd("pipe-pane", "-o", "-t", pane, f"cat >> {log}")  # opens theirs
    wait_for(lambda: tmux_server.option(pane, "@agentstate_pipe") == "", message="ours let go")
    tmux_server.cmd("send-keys", "-t", pane, "Enter")
    wait_for(lambda: tmux_server.state(pane) == "blocked", message="the prompt, from tmux's screen")
    wait_for(lambda: log.exists() and log.stat().st_size > 1000, message="their pipe gets the output")
    assert tmux_server.option(pane, "pane_pipe") == "1"
    time.sleep(1.0)
    assert tmux_server.option(pane, "@agentstate_pipe") == ""  # and we did not pipe it again
    assert [p["mode"] for p in sc.status()["panes"]] == ["capture"]
