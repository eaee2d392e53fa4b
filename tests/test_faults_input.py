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
    path.write_text("[" * 30_000 + "]" * 30_000 + "\n")  # within every read's bound


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
    not UTF-8: the pane is still watched, and the sidecar goes on watching new panes.
    After: alive; watching (the pane and a later one stated, sweeps go on); no figure for
    that file, no message, no traceback."""
    home = tmp_path / "home"
    (home / ".claude" / "sessions").mkdir(parents=True)
    transcripts = home / ".claude" / "projects" / CWD.replace("/", "-")
    transcripts.mkdir(parents=True)
    hostile = tmp_path / "hostile"
    HOSTILE[kind](hostile)
    if which == "session":  # named by the agent's pid: the pane moves it into place itself
        place = f"mv {shlex.quote(str(hostile))} \"$HOME/.claude/sessions/$$.json\""
    else:
        os.rename(hostile, transcripts / f"{SESSION_ID}.jsonl")  # a symlink still points
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


# -- tmux's "command too long" -----------------------------------------------------------------
MANY = 500


def many_panes(server, tmp_path, n=MANY) -> list[str]:
    """`n` panes (windows of one session), every published option set on each: as a sidecar
    watching them all leaves them. Made with source-file, which has no command-line limit."""
    from tmux_agentstate.plugin.wiring import PUBLISHED_PANE_OPTIONS
    script = tmp_path / "many.tmux"
    script.write_text("new-session -d -s many 'exec sleep 600'\n"
                      + "new-window -d -t many 'exec sleep 600'\n" * (n - 1))
    server.cmd("source-file", str(script))
    panes = server.cmd("list-panes", "-s", "-t", "many", "-F", "#{pane_id} #{window_id}").split("\n")
    assert len(panes) == n
    lines = []
    for row in panes:
        pane, window = row.split(" ")
        lines += [f"set-option -p -t {pane} {name} idle" for name in PUBLISHED_PANE_OPTIONS]
        lines.append(f"set-option -w -t {window} @agentstate_window idle")
    script.write_text("\n".join(lines) + "\n")
    server.cmd("source-file", str(script))
    return [row.split(" ")[0] for row in panes]


def options_left(server) -> list[str]:
    rows = server.cmd("list-panes", "-a", "-F",
                      "#{pane_id}:#{@agentstate}#{@agentstate_agent}#{@agentstate_context}"
                      "#{@agentstate_window}").split("\n")
    return [r for r in rows if not r.endswith(":")]


def cli(server, run_dir, *args, check=True, env=None):
    env = dict(os.environ, XDG_RUNTIME_DIR=str(run_dir), **(env or {}))
    env.pop("TMUX", None)
    out = subprocess.run([sys.executable, "-m", "tmux_agentstate", *args, "-L", server.name],
                         capture_output=True, text=True, env=env, timeout=120)
    assert "Traceback" not in out.stderr, out.stderr
    if check:
        assert out.returncode == 0, out.stderr
    return out


def test_stop_clean_unsets_the_options_of_500_panes(tmux_server, tmp_path):
    """`stop --clean` with our options on 500 panes (one tmux command line holds ~16 KB).
    After: exit 0, no traceback; no option left on any pane or window."""
    many_panes(tmux_server, tmp_path)
    assert len(options_left(tmux_server)) == MANY
    cli(tmux_server, tmp_path, "stop", "--clean")
    assert options_left(tmux_server) == []


def test_watcher_down_unsets_the_options_of_500_panes(tmux_server, tmp_path):
    """The restart budget is spent: `start --auto` leaves it down, and no pane may go on
    showing the dead watcher's verdict.
    After: down on purpose; `watcher down (…)` in the segment; no option left on 500 panes."""
    from tmux_agentstate.sidecar.runtime import RESTARTS_MAX, Runtime
    many_panes(tmux_server, tmp_path)
    env = dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path))
    runtime = Runtime(tmux_server.tmux.socket())
    runtime.ensure()
    (runtime.dir / "restarts").write_text(" ".join(str(time.time()) for _ in range(RESTARTS_MAX)))
    out = cli(tmux_server, tmp_path, "start", "--auto", check=False)
    assert out.returncode != 0 and "watcher down" in out.stderr
    assert options_left(tmux_server) == []
    assert "watcher down" in tmux_server.cmd("show-options", "-gqv", "@agentstate_summary")


def test_a_publish_batch_for_500_panes_without_control_mode(tmux_server, tmp_path):
    """What the sidecar sends when its control client is down (one process per batch):
    every option lands, however many panes.
    After: all 1,500 options set (in as few tmux processes as the limit allows)."""
    from tmux_agentstate.tmux import Batch, Tmux
    panes = many_panes(tmux_server, tmp_path)
    batch = Batch()
    for pane in panes:
        for name in ("@agentstate", "@agentstate_agent", "@agentstate_detail"):
            batch.set_pane(pane, name, f"blocked {'x' * 40}")
    Tmux(socket_name=tmux_server.name).apply(batch)
    assert tmux_server.cmd("show-options", "-p", "-t", panes[-1], "-v", "@agentstate").startswith("blocked")
    rows = tmux_server.cmd("list-panes", "-a", "-F", "#{@agentstate_detail}").split("\n")
    assert sum(r.startswith("blocked") for r in rows) == MANY


# -- more panes than the fd limit allows ----------------------------------------------------------
def _limit_fds(soft, hard):
    def preexec():
        import resource
        os.setsid()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    return preexec


@pytest.mark.parametrize("intake", ["emulate", "pipe"])
def test_more_agent_panes_than_the_fd_limit(tmux_server, tmp_path, intake):
    """Each piped pane holds two descriptors: under a hard limit of 100, 60 agent panes do not
    fit. The soft limit is raised to the hard one; the panes past it are read from tmux's
    screen; every pane gets its state, said once in the log, and the sidecar lives on.
    After: alive; all 60 watched (18 by FIFO, 42 from tmux's screen); one log line."""
    from tmux_agentstate.sidecar.runtime import Runtime
    fx = pick("idle", "claude")
    panes = [tmux_server.new_pane(replay_command(fx.path, "claude"), rows=fx.rows, cols=fx.cols)
             for _ in range(60)]
    env = dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path))
    env.pop("TMUX", None)
    proc = subprocess.Popen([sys.executable, "-m", "tmux_agentstate", "watch", "-L", tmux_server.name,
                             "--interval", "0.3", "--intake", intake], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            preexec_fn=_limit_fds(50, 100))
    try:
        wait_for(lambda: all(tmux_server.state(p) == "idle" for p in panes), timeout=90,
                 message="every pane watched")
        limits = open(f"/proc/{proc.pid}/limits").read()
        assert any(l.startswith("Max open files") and l.split()[3:5] == ["100", "100"]
                   for l in limits.splitlines()), limits
        runtime = Runtime(tmux_server.tmux.socket())
        modes = lambda: sorted({p["mode"] for p in (runtime.read_status() or {}).get("panes", [])})
        wait_for(lambda: modes() == sorted({intake, "capture"}), timeout=30,
                 message=f"panes read both ways: {modes()}")
        log = (runtime.dir / "sidecar.log").read_text()
        assert log.count("no FIFO for it") == 1 and "Traceback" not in log
        assert proc.poll() is None
    finally:
        proc.terminate()
        proc.wait(10)


# -- a full disk --------------------------------------------------------------------------------
def summary(server) -> str:
    return server.cmd("show-options", "-gqv", "@agentstate_summary")


@pytest.fixture
def tiny_runtime(tmux_server):
    """The server's runtime folder on a 64 KB tmpfs of its own; `fill()` fills it."""
    from tmux_agentstate.sidecar.runtime import Runtime
    runtime = Runtime(tmux_server.tmux.socket())
    runtime.ensure()
    mount = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs",
                            str(runtime.dir)], capture_output=True, text=True)
    if mount.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {mount.stderr.strip()}")

    def fill():
        with open(runtime.dir / "filler", "wb", buffering=0) as f:
            try:
                while True:
                    f.write(b"\0" * 4096)
            except OSError:
                pass
        return runtime.dir / "filler"

    runtime.fill = fill
    yield runtime
    subprocess.run(["umount", "-l", str(runtime.dir)], capture_output=True)


def test_a_full_disk_under_the_runtime_folder(tmux_server, sidecar, tiny_runtime):
    """The runtime folder (status file, log, FIFOs) on a 64 KB tmpfs that is then filled: the
    sidecar watches on (a new pane gets its state), the segment says `disk full` beside the
    counts, the log says it once (not per sweep); room again: the mark goes.
    After: alive; watching (a new pane stated); `agentstate: disk full` in the segment beside
    the counts while full; one log line each way."""
    fx, later = pick("blocked", "claude"), pick("idle", "codex")
    sc = sidecar(intake="emulate").start()
    pane = tmux_server.new_pane(replay_command(fx.path, "claude"), rows=fx.rows, cols=fx.cols)
    wait_for(lambda: tmux_server.state(pane) == "blocked", timeout=20, message="watched")
    filler = tiny_runtime.fill()
    wait_for(lambda: "disk full" in summary(tmux_server), timeout=20, message="said in the segment")
    assert "1" in summary(tmux_server).split("disk full")[0]  # the counts are still there
    other = tmux_server.new_pane(replay_command(later.path, "codex"), rows=later.rows, cols=later.cols)
    wait_for(lambda: tmux_server.state(other) == "idle", timeout=20, message="watching on")
    time.sleep(3)  # several status writes fail meanwhile: said once all the same
    filler.unlink()
    wait_for(lambda: "disk full" not in summary(tmux_server), timeout=20, message="room again")
    assert sc.proc.poll() is None and tmux_server.state(pane) == "blocked"
    log = (tiny_runtime.dir / "sidecar.log").read_text()
    assert 1 <= log.count("disk full") + log.count("No space left") <= 2, log
    assert "Traceback" not in log
    sc.kill()


def test_start_on_a_full_disk(tmux_server, tiny_runtime, tmp_path):
    """The disk is full before the sidecar starts: `start` starts it all the same (no
    traceback), it watches and says `disk full`, `status` names it (its pid from the kernel's
    lock table); with room again it names itself in its lock and the mark goes.
    After: alive; watching; `agentstate: disk full` in the segment until room; `stop` works."""
    fx = pick("blocked", "claude")
    pane = tmux_server.new_pane(replay_command(fx.path, "claude"), rows=fx.rows, cols=fx.cols)
    filler = tiny_runtime.fill()
    try:
        out = cli(tmux_server, tmp_path, "start")
        wait_for(lambda: tmux_server.state(pane) == "blocked", timeout=30, message="watched")
        wait_for(lambda: "disk full" in summary(tmux_server), timeout=20, message="said")
        pid = tiny_runtime.running_pid()  # known all the same (from the kernel's lock table)
        assert pid and pid > 0 and f"(pid {pid})" in out.stdout
        assert f"running (pid {pid})" in cli(tmux_server, tmp_path, "status").stdout
        filler.unlink()
        wait_for(lambda: "disk full" not in summary(tmux_server), timeout=20, message="room again")
        wait_for(lambda: (tiny_runtime.running_pid() or 0) > 0, message="named in its lock")
    finally:
        out = cli(tmux_server, tmp_path, "stop", check=False)
    assert "stopped (pid" in out.stdout and tiny_runtime.running_pid() is None


# -- a sidecar that dies in its first second ------------------------------------------------------
# In the sidecars `start` spawns (through PYTHONPATH, as any site customisation a user has
# would be): the sidecar dies half a second after it took its lock, before its control client
# is attached (so no client-detached hook can notice), as long as the counter file says so.
DIES_AT_START = """
import os
counter = os.environ.get("AGENTSTATE_TEST_DEATHS")
if counter:
    from tmux_agentstate.sidecar import runtime as _runtime
    _acquire = _runtime.Runtime.acquire

    def acquire(self):
        got = _acquire(self)
        left = int(open(counter).read())
        if got and left > 0:
            open(counter, "w").write(str(left - 1))
            import time
            time.sleep(0.5)  # long enough to be seen running: then dead
            os._exit(3)
        return got
    _runtime.Runtime.acquire = acquire
"""


def dying_sidecars(tmp_path, deaths: int) -> tuple[dict, "Path"]:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(DIES_AT_START)
    counter = tmp_path / "deaths"
    counter.write_text(str(deaths))
    return {"PYTHONPATH": str(site), "AGENTSTATE_TEST_DEATHS": str(counter)}, counter


def test_a_sidecar_that_dies_in_its_first_second_is_started_again(tmux_server, tmp_path):
    """The sidecar `start` spawns dies half a second after taking its lock, before its control
    client attached (no hook can see it go).
    After: `start` started another (counted in the restart budget); alive, watching."""
    from tmux_agentstate.sidecar.runtime import Runtime
    env, counter = dying_sidecars(tmp_path, 1)
    fx = pick("blocked", "claude")
    pane = tmux_server.new_pane(replay_command(fx.path, "claude"), rows=fx.rows, cols=fx.cols)
    try:
        out = cli(tmux_server, tmp_path, "start", env=env)
        assert counter.read_text() == "0"  # the first one died
        pid = Runtime(tmux_server.tmux.socket()).running_pid()
        assert pid and pid > 0 and f"(pid {pid})" in out.stdout
        wait_for(lambda: tmux_server.state(pane) == "blocked", timeout=20, message="watched")
    finally:
        cli(tmux_server, tmp_path, "stop", check=False)


def test_a_sidecar_that_always_dies_at_start_is_left_down_within_the_budget(tmux_server, tmp_path):
    """Every sidecar dies at start.
    After: 1 + RESTARTS_MAX tries, then down; one line `watcher down: …` (exit 1) and
    `watcher down (…)` in the segment."""
    from tmux_agentstate.sidecar.runtime import RESTARTS_MAX, Runtime
    env, counter = dying_sidecars(tmp_path, 99)
    out = cli(tmux_server, tmp_path, "start", env=env, check=False)
    assert out.returncode != 0 and "watcher down" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert 99 - int(counter.read_text()) == RESTARTS_MAX + 1  # the start, then the budget
    assert Runtime(tmux_server.tmux.socket()).running_pid() is None
    assert "watcher down" in summary(tmux_server)


# -- the user's own manifests --------------------------------------------------------------------
def _deep_toml(path):
    path.write_text("x = " + "[" * 50_000 + "]" * 50_000 + "\n")


HOSTILE_TOML = {"fifo": _fifo, "dev-zero": _dev_zero, "deep-toml": _deep_toml, "huge": _huge,
                "not-utf8": _not_utf8}


@pytest.mark.parametrize("kind", list(HOSTILE_TOML))
def test_hostile_user_manifest(tmux_server, sidecar, tmp_path, kind):
    """A file in the user's manifest folder that is a FIFO, a device, GBs, nested too deep for
    the TOML parser or not UTF-8, there at start and one more added while it runs (the reload):
    each is one manifest error in the log; the bundled manifests watch on.
    After: alive; watching (both panes stated by the bundled manifests); `manifest error` per
    file in the log, no traceback."""
    config = tmp_path / "config"
    folder = config / "tmux-agentstate" / "manifests"
    folder.mkdir(parents=True)
    HOSTILE_TOML[kind](folder / "claude.toml")
    sc = sidecar(intake="emulate")
    sc.env["XDG_CONFIG_HOME"] = str(config)
    sc.start()
    fx, later = pick("blocked", "claude"), pick("idle", "codex")
    pane = tmux_server.new_pane(replay_command(fx.path, "claude"), rows=fx.rows, cols=fx.cols)
    wait_for(lambda: tmux_server.state(pane) == "blocked", timeout=20, message="watched")
    HOSTILE_TOML[kind](folder / "codex.toml")
    os.kill(sc.proc.pid, signal.SIGHUP)  # reload now (the folder watch would, a moment later)
    other = tmux_server.new_pane(replay_command(later.path, "codex"), rows=later.rows, cols=later.cols)
    wait_for(lambda: tmux_server.state(other) == "idle", timeout=20, message="a later pane watched")
    log = sc.runtime_dir() / "sidecar.log"
    wait_for(lambda: log.read_text().count("manifest error") >= 2, message="both said")
    assert sc.proc.poll() is None and no_traceback(sc)


def test_descriptors_past_1024(tmux_server, tmp_path):
    """With hundreds of piped panes (two descriptors each) the sidecar's own pipes to tmux get
    numbers past 1024, where select() cannot go: here 1100 descriptors are taken before it
    starts. It watches all the same.
    After: alive; watching; its commands through its control client."""
    fx = pick("blocked", "claude")
    pane = tmux_server.new_pane(replay_command(fx.path, "claude"), rows=fx.rows, cols=fx.cols)
    env = dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path))
    env.pop("TMUX", None)
    watch = [sys.executable, "-m", "tmux_agentstate", "watch", "-L", tmux_server.name,
             "--interval", "0.3"]
    # every descriptor from 3 to 1105 taken (by the shell, kept across its exec)
    proc = subprocess.Popen(["bash", "-c", 'for fd in $(seq 3 1105); do eval "exec $fd</dev/null"; '
                             'done; exec "$@"', "bash", *watch], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: tmux_server.state(pane) == "blocked" or proc.poll() is not None,
                 timeout=30, message="watched")
        assert tmux_server.state(pane) == "blocked"
        # its commands go through its control client (not a process each), and it lives on
        wait_for(lambda: "1" in tmux_server.cmd("list-clients", "-F", "#{client_control_mode}"),
                 message="a control client")
        time.sleep(3)
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
        assert "1" in tmux_server.cmd("list-clients", "-F", "#{client_control_mode}")
    finally:
        proc.terminate()
        proc.wait(10)
        proc.stderr.close()


def test_watcher_down_is_said_only_when_a_sidecar_ran_before(tmux_server, tmp_path):
    """A hook's `start --auto` says "watcher down, restarting…" in the segment until the new
    sidecar publishes, but only when one ran before and died: the first start on a server is
    no restart (every command writes the runtime folder's note, so that note cannot tell)."""
    from tmux_agentstate.sidecar.runtime import Runtime
    # every value the segment takes, in order (after-set-option runs for every client's
    # set-option, the control client's too)
    tmux_server.cmd("set-hook", "-g", "after-set-option",
                    "set -gaF @segments '#{@agentstate_summary}|'")
    cli(tmux_server, tmp_path, "list")  # any command: the runtime folder and its note
    cli(tmux_server, tmp_path, "start", "--auto")
    pid = wait_for(lambda: Runtime(tmux_server.tmux.socket()).running_pid(), message="sidecar")
    assert "watcher down" not in tmux_server.cmd("show-options", "-gqv", "@segments")
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not Runtime(tmux_server.tmux.socket()).running_pid(), message="it died")
    cli(tmux_server, tmp_path, "start", "--auto")  # as the client-detached hook runs it
    assert "watcher down, restarting" in tmux_server.cmd("show-options", "-gqv", "@segments")
    cli(tmux_server, tmp_path, "stop")
