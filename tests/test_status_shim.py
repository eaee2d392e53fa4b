"""`launch --status-shim` (hooks/status_shim.py): the agent behind a pty shim that answers its
Program Status query (OSC 7501) before the DA1 that follows it reaches tmux, and passes
everything else on: bytes, window size, signals, job control, exit status, its tty's modes.

Through a real tmux server and the real `tmux-agentstate launch`: the agent is a stand-in
named `claude` on PATH (so `launch claude` is what runs, hooks and all) that asks the query
and the DA1 the way Claude Code 2.1.33x does and writes what it gets back to a file, then sits
in cooked mode logging the signals it receives and obeying lines typed at it. The real Claude
Code through the shim is at the end (skipped when it is not installed).
"""
from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import wait_for
from test_wheel import wheel_venv  # noqa: F401 (a fixture)
from tmux_agentstate import procs
from tmux_agentstate.core.catalog import Catalog
from tmux_agentstate.core.origin import LaunchRecord
from tmux_agentstate.hooks.status_shim import QUERY, REPLY, QueryWatch

STANDIN = r'''#!PYTHON
import fcntl, json, os, select, signal, struct, subprocess, sys, termios, time, tty
class Log:  # one os.write per line: signal handlers may log inside each other
    fd = os.open(os.environ["STANDIN_LOG"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    def write(self, line):
        os.write(self.fd, line.encode())
log = Log()
args = sys.argv[1:]
settings = json.loads(args[args.index("--settings") + 1]) if "--settings" in args else {}
log.write(f"PID {os.getpid()}\n")

def size():
    try:
        rows, cols = struct.unpack("HHHH", fcntl.ioctl(1, termios.TIOCGWINSZ, b"\0" * 8))[:2]
    except OSError:  # hung up
        return "-"
    return f"{rows}x{cols}"

log.write(f"SIZE {size()}\n")
# the probe, as Claude Code sends it: the query, then DA1 as the end-of-probe marker
cooked = termios.tcgetattr(0)
tty.setraw(0)
os.write(1, b"\x1b]7501;?\x07\x1b[c")
got, end = b"", time.time() + 5
while b"c" not in got.rpartition(b"\x1b[?")[2] and time.time() < end:
    if select.select([0], [], [], 0.1)[0]:
        got += os.read(0, 1024)
termios.tcsetattr(0, termios.TCSANOW, cooked)
log.write(f"PROBE {got.hex()}\n")
for name in ("SIGINT", "SIGWINCH", "SIGCONT", "SIGHUP"):
    signal.signal(getattr(signal, name), lambda s, f: log.write(f"{signal.Signals(s).name} {size()}\n"))
signal.signal(signal.SIGTERM, lambda s, f: (log.write("SIGTERM\n"), os._exit(43)))
sys.stdout.write("STANDIN READY\n")
sys.stdout.flush()
def lines():
    try:
        yield from sys.stdin
    except OSError:  # EIO: its terminal hung up
        pass

for line in lines():  # what the test types at it
    word, _, rest = line.strip().partition(" ")
    if word == "exit":
        sys.exit(int(rest))
    if word == "hook":  # run our hooks the way Claude Code does: sh -c, the payload on stdin
        for entry in settings.get("hooks", {}).get(rest, []):
            for h in entry["hooks"]:
                subprocess.run(["sh", "-c", h["command"]], text=True,
                               input=json.dumps({"hook_event_name": rest, "tool_name": "Bash"}))
        log.write(f"HOOKED {rest}\n")
    if word == "suspend":  # Claude Code's own Ctrl-Z: its whole process group
        os.kill(0, signal.SIGTSTP)
        log.write("RESUMED\n")
log.write("EOF\n")  # its input ended
time.sleep(1.5)  # a hangup's signal may come after: it is logged too
'''
DA1_REPLY = re.compile(rb"\x1b\[\?[0-9;]*c")


class Shell:
    """A pane with a plain shell, PATH finding the stand-in `claude`, from which the test runs
    `tmux-agentstate launch --status-shim claude` as a user would."""

    def __init__(self, server, tmp_path: Path, rows: int = 30, cols: int = 100):
        self.server, self.dir = server, tmp_path
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        exe = bin_dir / "claude"
        exe.write_text(STANDIN.replace("PYTHON", sys.executable, 1))
        exe.chmod(0o755)
        self.log_path = tmp_path / "standin.log"
        self.pane = server.new_pane(rows=rows, cols=cols)
        self.session = server.cmd("display-message", "-p", "-t", self.pane, "#{session_name}")
        self.pane_pid = int(server.cmd("display-message", "-p", "-t", self.pane, "#{pane_pid}"))
        self.path = f"{bin_dir}:{os.path.dirname(sys.executable)}:/usr/bin:/bin"
        self.type(f"export PATH={shlex.quote(self.path)} STANDIN_LOG={shlex.quote(str(self.log_path))}")

    def type(self, line: str) -> None:
        self.server.cmd("send-keys", "-t", self.pane, "-l", line)
        self.server.cmd("send-keys", "-t", self.pane, "Enter")

    def screen(self) -> str:
        return self.server.cmd("capture-pane", "-p", "-t", self.pane)

    def launch(self, *args: str, shim: bool = True,
               launcher: str = f"{shlex.quote(sys.executable)} -m tmux_agentstate") -> None:
        """Run the launch with the tty's modes saved before and after, and its exit status."""
        d = shlex.quote(str(self.dir))
        flag = " --status-shim" if shim else ""
        self.type(f"stty -g > {d}/tty.before; {launcher} launch{flag} claude {shlex.join(args)}; "
                  f"echo $? > {d}/exit; stty -g > {d}/tty.after")
        wait_for(lambda: "STANDIN READY" in self.screen(), timeout=20, message="the stand-in up")

    def log(self) -> list[str]:
        return self.log_path.read_text().splitlines() if self.log_path.exists() else []

    def logged(self, word: str) -> list[str]:
        return [line for line in self.log() if line.split(" ")[0] == word]

    def probe(self) -> bytes:
        return bytes.fromhex(self.logged("PROBE")[0].partition(" ")[2])

    def agent_pid(self) -> int:
        return int(self.logged("PID")[-1].split()[1])

    def exit_status(self) -> int:
        path = self.dir / "exit"
        wait_for(path.exists, timeout=20, message="the launch to end")
        time.sleep(0.2)  # the `stty -g` after it
        return int(path.read_text())

    def tty_restored(self) -> bool:
        return (self.dir / "tty.before").read_text() == (self.dir / "tty.after").read_text()


# -- the query ----------------------------------------------------------------------------------
def test_query_is_answered_before_the_da1_reaches_tmux(tmux_server, tmp_path):
    sh = Shell(tmux_server, tmp_path)
    sh.launch()
    got = sh.probe()
    assert got.startswith(REPLY), got  # ours first ...
    assert DA1_REPLY.search(got[len(REPLY):]), got  # ... then tmux's own DA1 reply
    sh.type("exit 0")
    assert sh.exit_status() == 0 and sh.tty_restored()


def test_without_the_shim_tmux_leaves_the_query_unanswered(tmux_server, tmp_path):
    """The baseline the shim exists for (tmux 3.3a): only the DA1 is answered."""
    sh = Shell(tmux_server, tmp_path)
    sh.launch(shim=False)
    got = sh.probe()
    assert DA1_REPLY.search(got) and b"7501" not in got, got
    sh.type("exit 0")


def test_a_query_split_anywhere_across_reads_is_seen_once():
    stream = b"abc" + QUERY + b"\x07\x1b[c" + b"x" * 10 + QUERY + b"\x1b\\"
    for cut in range(len(stream) + 1):
        for cut2 in range(cut, len(stream) + 1, 3):
            w = QueryWatch()
            assert w.feed(stream[:cut]) + w.feed(stream[cut:cut2]) + w.feed(stream[cut2:]) == 2
    w = QueryWatch()  # a lookalike is not a query
    assert w.feed(b"\x1b]7501;state=idle\x07\x1b]7501") + w.feed(b";state=working\x07") == 0


# -- what it passes on ------------------------------------------------------------------------------
def test_window_size_at_start_and_on_resize_reach_the_agent(tmux_server, tmp_path):
    sh = Shell(tmux_server, tmp_path, rows=30, cols=100)
    sh.launch()
    assert sh.logged("SIZE") == ["SIZE 30x100"]
    tmux_server.cmd("resize-window", "-t", sh.session, "-x", "77", "-y", "21")
    wait_for(lambda: "SIGWINCH 21x77" in sh.log(), message=f"the resize: {sh.log()}")
    sh.type("exit 0")
    assert sh.exit_status() == 0


def test_ctrl_c_reaches_the_agent_and_its_exit_status_passes_through(tmux_server, tmp_path):
    sh = Shell(tmux_server, tmp_path)
    sh.launch()
    tmux_server.cmd("send-keys", "-t", sh.pane, "C-c")  # a byte through the shim; the agent's
    wait_for(lambda: sh.logged("SIGINT"), message="SIGINT")  # own tty makes it the signal
    sh.type("exit 7")
    assert sh.exit_status() == 7
    assert sh.tty_restored()


def test_sigterm_to_the_shim_reaches_the_agent_whose_status_passes_through(tmux_server, tmp_path):
    sh = Shell(tmux_server, tmp_path)
    sh.launch()
    shim = procs.foreground_pgid(sh.pane_pid)  # what is in front in the pane: the shim
    assert shim != sh.agent_pid()
    os.kill(shim, signal.SIGTERM)
    assert sh.exit_status() == 43 and sh.logged("SIGTERM")
    assert sh.tty_restored()


def test_an_agent_killed_by_a_signal_leaves_the_shim_the_same_way(tmux_server, tmp_path):
    sh = Shell(tmux_server, tmp_path)
    sh.launch()
    os.kill(sh.agent_pid(), signal.SIGKILL)
    assert sh.exit_status() == 128 + signal.SIGKILL
    assert sh.tty_restored()


def test_the_agent_suspending_itself_suspends_the_job_and_fg_resumes_it(tmux_server, tmp_path):
    """Claude Code's Ctrl-Z is `kill(0, SIGTSTP)`: its process group must not be orphaned (the
    keeper), and the shim must stop in the pane's shell and pass SIGCONT on."""
    sh = Shell(tmux_server, tmp_path)
    sh.launch()
    sh.type("suspend")
    wait_for(lambda: "Stopped" in sh.screen(), message="the job stopped in the shell")
    assert not sh.logged("RESUMED")
    # the shell went on with its line while the job was stopped: the tty was its own again
    assert sh.exit_status() == 128 + signal.SIGTSTP and sh.tty_restored()
    (tmp_path / "exit").unlink()
    sh.type("fg")
    wait_for(lambda: sh.logged("RESUMED") and sh.logged("SIGCONT"), message=f"resumed: {sh.log()}")
    sh.type("exit 5")
    wait_for(lambda: sh.screen().rstrip().endswith("$") or sh.screen().rstrip().endswith("#"),
             message="the shell's prompt")
    sh.type(f"echo $? > {shlex.quote(str(tmp_path))}/exit; stty -g > {shlex.quote(str(tmp_path))}/tty.after")
    assert sh.exit_status() == 5 and sh.tty_restored()


def test_a_closed_pane_hangs_up_the_agents_terminal_too(tmux_server, tmp_path):
    """The agent ignores SIGHUP, as some do, and leaves when its input ends, as it would have
    without the shim: nothing is left behind."""
    sh = Shell(tmux_server, tmp_path)
    sh.launch()
    shim, agent = procs.foreground_pgid(sh.pane_pid), sh.agent_pid()
    tmux_server.cmd("kill-pane", "-t", sh.pane)
    wait_for(lambda: sh.logged("EOF"), message=f"the agent's input ended: {sh.log()}")
    assert sh.logged("SIGHUP"), sh.log()
    wait_for(lambda: not any(os.path.exists(f"/proc/{p}") for p in (shim, agent)),
             message="the shim and the agent gone")


def test_a_killed_shim_still_hangs_up_the_agent(tmux_server, tmp_path):
    """SIGKILL cannot be caught: the keeper passes the hangup on, so no agent is left running
    on a terminal nobody reads (the pane's tty stays raw: `stty sane`)."""
    sh = Shell(tmux_server, tmp_path)
    sh.launch()
    shim, agent = procs.foreground_pgid(sh.pane_pid), sh.agent_pid()
    os.kill(shim, signal.SIGKILL)
    try:
        # its hangup: its input ends (the kernel's) and SIGHUP comes (the keeper's)
        wait_for(lambda: sh.logged("EOF") and sh.logged("SIGHUP"), message="the hangup")
    except AssertionError:
        def st(pid):
            try:
                return open(f"/proc/{pid}/stat").read() + "".join(
                    l for l in open(f"/proc/{pid}/status") if l.startswith(("Sig", "Shd")))
            except OSError as e:
                return str(e)
        raise AssertionError(f"{sh.log()}\nshim {st(shim)}\nagent {st(agent)}\n"
                             f"{subprocess.run(['ps', '-ef', '--forest'], capture_output=True, text=True).stdout[-3000:]}")
    wait_for(lambda: not os.path.exists(f"/proc/{agent}"), message="the agent gone")


def test_as_the_panes_own_command_a_suspending_agent_goes_on(tmux_server, tmp_path):
    """With no shell above the shim to take the terminal, a stop would leave the agent stopped
    on a pane nobody can `fg` in: the shim lets it go on (Claude Code redraws)."""
    sh = Shell(tmux_server, tmp_path)
    tmux_server.cmd("respawn-pane", "-k", "-t", sh.pane,
                    f"exec env PATH={shlex.quote(sh.path)} STANDIN_LOG={shlex.quote(str(sh.log_path))} "
                    f"{shlex.quote(sys.executable)} -m tmux_agentstate launch --status-shim claude")
    wait_for(lambda: "STANDIN READY" in sh.screen(), timeout=20, message="the stand-in up")
    sh.type("suspend")
    wait_for(lambda: sh.logged("RESUMED") and sh.logged("SIGCONT"), message=f"resumed: {sh.log()}")
    sh.type("hook Stop")
    wait_for(lambda: sh.logged("HOOKED"), message="still taking input")


def test_sigtstp_to_the_shim_stops_the_job_and_fg_resumes_it(tmux_server, tmp_path):
    sh = Shell(tmux_server, tmp_path)
    sh.launch()
    os.kill(procs.foreground_pgid(sh.pane_pid), signal.SIGTSTP)
    wait_for(lambda: "Stopped" in sh.screen(), message="the job stopped in the shell")
    sh.type("fg")
    wait_for(lambda: sh.logged("SIGCONT"), message=f"resumed: {sh.log()}")
    (tmp_path / "exit").unlink()
    sh.type("exit 3")
    wait_for(lambda: sh.screen().rstrip().endswith("#") or sh.screen().rstrip().endswith("$"),
             message="the shell's prompt")
    sh.type(f"echo $? > {shlex.quote(str(tmp_path))}/exit")
    assert sh.exit_status() == 3


def test_a_missing_program_gives_one_line_and_the_tty_back(tmux_server, tmp_path):
    sh = Shell(tmux_server, tmp_path)
    d = shlex.quote(str(tmp_path))
    sh.type(f"stty -g > {d}/tty.before; {shlex.quote(sys.executable)} -m "
            f"tmux_agentstate.hooks.status_shim /nonexistent/agent agent; echo $? > {d}/exit; "
            f"stty -g > {d}/tty.after")
    assert sh.exit_status() == 127
    assert sh.tty_restored()
    assert "cannot start /nonexistent/agent" in sh.screen()
    assert "Traceback" not in sh.screen()


# -- identity and proof of origin ---------------------------------------------------------------------
def test_the_pane_is_still_claude_and_its_hooks_still_prove_their_origin(tmux_server, tmp_path):
    sh = Shell(tmux_server, tmp_path)
    sh.launch("--permission-mode", "manual")
    agent = sh.agent_pid()
    fg = procs.foreground(sh.pane_pid)
    assert fg is not None and fg.pgid == agent and agent in fg.pids and fg.hint == "claude"
    assert Catalog().for_foreground(fg).name == "claude"
    # tmux names the pane's command (and a window's automatic name) after the agent, not python
    assert tmux_server.cmd("display-message", "-p", "-t", sh.pane, "#{pane_current_command}") == "claude"
    record = LaunchRecord.parse(tmux_server.option(sh.pane, "@agentstate_launch"))
    assert record is not None and record.pid == agent  # the agent's pid, not the shim's
    sh.type("hook PermissionRequest")
    wait_for(lambda: sh.logged("HOOKED"), message="the hook ran")
    state, _, source, token = tmux_server.option(sh.pane, "@agentstate_report").split()
    assert (state, source, token) == ("blocked", "hook:claude:PermissionRequest", record.token)
    sh.type("exit 0")
    assert sh.exit_status() == 0


def test_from_the_wheel_the_query_is_answered_and_the_hooks_prove_their_origin(tmux_server, tmp_path, wheel_venv):
    """As a user gets it: the installed wheel's `tmux-agentstate launch --status-shim`."""
    venv, _, _ = wheel_venv
    sh = Shell(tmux_server, tmp_path)
    sh.launch(launcher=str(venv / "bin" / "tmux-agentstate"))
    assert sh.probe().startswith(REPLY)
    sh.type("hook Stop")
    wait_for(lambda: sh.logged("HOOKED"), message="the hook ran")
    record = LaunchRecord.parse(tmux_server.option(sh.pane, "@agentstate_launch"))
    assert record.pid == sh.agent_pid()
    assert tmux_server.option(sh.pane, "@agentstate_report").split()[2:] == ["hook:claude:Stop", record.token]
    sh.type("exit 0")
    assert sh.exit_status() == 0 and sh.tty_restored()


def test_without_a_terminal_launch_runs_the_agent_plainly_with_one_line(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude").write_text("#!/bin/sh\necho plain-run \"$#\"\n")
    (bin_dir / "claude").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    env.pop("TMUX", None)
    out = subprocess.run([sys.executable, "-m", "tmux_agentstate", "launch", "--status-shim", "claude"],
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, timeout=30)
    assert out.returncode == 0 and out.stdout.startswith("plain-run")
    assert out.stderr.strip() == "tmux-agentstate launch: --status-shim is for tmux panes: started without it"
    env["TMUX"] = "/nonexistent/socket,1,0"  # in tmux, but not on a terminal (a tool call's pipes)
    out = subprocess.run([sys.executable, "-m", "tmux_agentstate", "launch", "--status-shim", "claude"],
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, timeout=30)
    assert out.returncode == 0 and out.stdout.startswith("plain-run")
    assert out.stderr.strip() == ("tmux-agentstate launch: --status-shim needs a terminal on stdin "
                                  "and stdout: started without it")


# -- the real Claude Code ------------------------------------------------------------------------------
def _real_claude():
    import importlib.util
    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("harness_claude_shim", root / "harness" / "claude.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


hclaude = _real_claude()


@pytest.mark.skipif(not hclaude.BIN.exists(), reason=f"Claude Code is not installed in {hclaude.PREFIX}")
def test_real_claude_through_the_shim_writes_its_state_into_the_panes_bytes(tmux_server, sidecar, tmp_path):
    from test_real_agents import AgentPane, claude_env
    sc = sidecar(interval=0.3).start()
    mock = hclaude.Mock(tmp_path / "requests.jsonl")
    env, proj = claude_env(tmp_path, mock)
    raw = tmp_path / "pane.raw"
    argv = [sys.executable, "-m", "tmux_agentstate", "launch", "--status-shim", "claude",
            "--permission-mode", "manual"]
    try:
        agent = AgentPane(tmux_server, argv, env, proj)
        tmux_server.cmd("pipe-pane", "-O", "-t", agent.pane, f"cat >> {shlex.quote(str(raw))}")
        agent.wait_text("❯", "? for shortcuts", timeout=60)
        states = lambda: re.findall(rb"\x1b\]7501;state=([a-z]+)[^\x07\x1b]*", raw.read_bytes())  # noqa: E731
        wait_for(lambda: b"idle" in states(), timeout=20, message="Claude's own idle report")
        agent.type("set up the build output RUNCMD mkdir -p build")
        agent.keys("Enter")
        wait_for(lambda: b"blocked" in states(), timeout=60, message="Claude's blocked report")
        blocked = re.search(rb"\x1b\]7501;(state=blocked[^\x07\x1b]*)", raw.read_bytes()).group(1)
        assert b":kind=permission" in blocked
        agent.wait_text("Do you want to proceed?", timeout=20)
        # the sidecar sees the pane as Claude's, through the shim
        try:
            wait_for(lambda: tmux_server.state(agent.pane) == "blocked", message="@agentstate blocked")
        except AssertionError:
            log = (sc.runtime_dir() / "sidecar.log").read_text(errors="replace")
            raise AssertionError(" ".join(tmux_server.option(agent.pane, o) or "-" for o in (
                "@agentstate", "@agentstate_agent", "@agentstate_source")) + "\n" + log[-3000:]) from None
        assert tmux_server.option(agent.pane, "@agentstate_agent") == "claude"
        time.sleep(0.5)  # keys sent while the dialog is still being drawn are lost
        agent.keys("Enter")
        try:
            wait_for(lambda: states()[-1:] == [b"done"], timeout=60, message="done")
        except AssertionError:
            raise AssertionError(f"no done: {states()}\n{agent.screen()}") from None
        seq = states()
        assert seq.index(b"working") < seq.index(b"blocked") < len(seq) - 1, seq
        # the pane is identified as claude through the shim
        pane_pid = int(tmux_server.cmd("display-message", "-p", "-t", agent.pane, "#{pane_pid}"))
        fg = procs.foreground(pane_pid)
        assert fg is not None and fg.name == "claude" and fg.hint == "claude"
    finally:
        tmux_server.kill()
        mock.close()
        hclaude.common.kill_pids(hclaude.common.pids_naming(env["HOME"]))
