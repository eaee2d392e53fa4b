"""Updates never leave a blind watcher. The plugin as TPM has it: a git checkout in a folder of
its own, its venv built from it by `plugin/ensure` (a wheel install, not the editable one).
A TPM update (`prefix + U`: a new commit, then tmux.conf re-sourced) must end with a new
sidecar from the new venv watching every agent pane; a reinstall under a running sidecar makes
it hand over to the new install by itself; `doctor` is healthy only when the sidecar really
watches the agent panes."""
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import replay_command, wait_for
from tmux_agentstate.core.fixtures import load_index
from tmux_agentstate.sidecar.runtime import Runtime

ROOT = Path(__file__).resolve().parent.parent
UPDATE_TIMEOUT = 240  # a venv rebuilt by pip, on a busy machine


def _git(cwd, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    out = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@pytest.fixture(scope="module")
def plugin(tmp_path_factory):
    """(plugin folder, its venv): this checkout's files as a git repo of its own (where TPM
    clones it), and the venv `plugin/ensure` builds there, stamped with its commit."""
    base = tmp_path_factory.mktemp("tpm")
    folder = base / "tmux-agentstate"
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True,
                           check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        src = ROOT / name
        if src.is_file():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, folder / name)
    _git(folder, "init", "-q")
    _git(folder, "add", "-A")
    _git(folder, "commit", "-qm", "the release TPM cloned")
    venv = folder / ".venv"
    assert subprocess.run([sys.executable, "-m", "venv", venv]).returncode == 0
    built = subprocess.run([venv / "bin" / "python", "-m", "pip", "install", "-q",
                            "--disable-pip-version-check", folder], capture_output=True, text=True,
                           cwd=base)
    assert built.returncode == 0, built.stderr[-2000:]
    return folder, venv


def stamp_as_built(folder: Path, venv: Path) -> None:
    """The venv is current for the checkout's commit (what ensure writes after a build)."""
    (venv / ".agentstate-stamp").write_text(_git(folder, "rev-parse", "HEAD") + "\n")


def sidecar_status(srv) -> dict:
    """The running sidecar's status, once it is the one holding the lock ({} before)."""
    rt = Runtime(srv.tmux.socket())
    pid = rt.running_pid()
    st = rt.read_status() or {}
    return st if pid and st.get("pid") == pid else {}


def watches(srv, pane, state, not_pid=0) -> dict:
    """The status of a sidecar (other than `not_pid`) that watches `pane` in `state`."""
    st = sidecar_status(srv)
    if st.get("pid") in (None, not_pid):
        return {}
    if not any(p["pane"] == pane and p["state"] == state for p in st.get("panes", [])):
        return {}
    return st


def blocked_replay(srv) -> str:
    """A pane replaying a real blocked Claude Code capture (it stays blocked)."""
    fx = next(f for f in load_index() if f.agent == "claude" and f.state == "blocked")
    return srv.new_pane(replay_command(fx.path, "claude"), rows=fx.rows, cols=fx.cols)


def summary(srv) -> str:
    return srv.cmd("show-options", "-gqv", "@agentstate_summary")


def a_change_to_the_package(folder: Path, text: str) -> None:
    init = folder / "tmux_agentstate" / "__init__.py"
    init.write_text(init.read_text() + f"# {text}\n")


def runs_from(pid: int) -> str:
    import psutil
    return psutil.Process(pid).cmdline()[0]


def gone(pid: int) -> bool:
    """The process ended (a zombie left for its reaper counts as ended)."""
    import psutil
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def restarts_counted(srv) -> int:
    try:
        return len((Runtime(srv.tmux.socket()).dir / "restarts").read_text().split())
    except OSError:
        return 0


def plugin_up(srv, folder, venv, segment=False) -> tuple[str, dict]:
    """The plugin loaded as built (its venv stamped), a blocked agent pane: the pane, and the
    first sidecar's status once it watches it."""
    stamp_as_built(folder, venv)
    if segment:
        srv.cmd("set-option", "-g", "status-right", "#{agentstate}")
    pane = blocked_replay(srv)
    srv.cmd("run-shell", str(folder / "plugin.tmux"))  # the hooks too: they must not count it
    return pane, wait_for(lambda: watches(srv, pane, "blocked"), timeout=30, message="sidecar up")


def test_a_tpm_update_ends_with_a_new_sidecar_from_the_new_venv(tmux_server, run_dir, plugin):
    srv = tmux_server
    folder, venv = plugin
    pane, before = plugin_up(srv, folder, venv, segment=True)
    assert runs_from(before["pid"]) == str(venv / "bin" / "python")  # the plugin's venv
    # `prefix + U`: TPM pulls a new commit, then tmux.conf is sourced again
    a_change_to_the_package(folder, "the update")
    _git(folder, "commit", "-qam", "the update")
    srv.cmd("run-shell", str(folder / "plugin.tmux"))
    after = wait_for(lambda: watches(srv, pane, "blocked", not_pid=before["pid"]),
                     timeout=UPDATE_TIMEOUT, interval=0.5, message="a new sidecar watching the pane")
    assert (venv / ".agentstate-stamp").read_text().strip() == _git(folder, "rev-parse", "HEAD")
    # it runs the new code, from the rebuilt venv
    assert "# the update" in (Path(after["install"]["package"]) / "__init__.py").read_text()
    assert after["install"]["prefix"] == str(venv) == str(Path(runs_from(after["pid"])).parent.parent)
    assert srv.state(pane) == "blocked"
    # the segment is back to the summary: one blocked pane, no "installing…" left over
    wait_for(lambda: " !1 " in summary(srv), timeout=15, message="the summary in the segment")
    assert "installing" not in summary(srv)
    # and the old one is gone for good
    assert wait_for(lambda: gone(before["pid"]), timeout=10, message="the old sidecar ended")


def test_a_sidecar_whose_install_changed_under_it_hands_over(tmux_server, run_dir, plugin):
    srv = tmux_server
    folder, venv = plugin
    pane, before = plugin_up(srv, folder, venv)
    counted = restarts_counted(srv)
    # pip reinstalls the package over the running sidecar (pipx reinstall, pip install -U)
    a_change_to_the_package(folder, "reinstalled")
    out = subprocess.run([venv / "bin" / "python", "-m", "pip", "install", "-q", "--no-deps",
                          "--force-reinstall", "--disable-pip-version-check", folder],
                         capture_output=True, text=True, cwd=folder.parent)
    assert out.returncode == 0, out.stderr[-2000:]
    after = wait_for(lambda: watches(srv, pane, "blocked", not_pid=before["pid"]), timeout=60,
                     interval=0.2, message="a new sidecar watching the pane")
    assert after["install"]["stamp"] != before["install"]["stamp"]
    assert "# reinstalled" in (Path(after["install"]["package"]) / "__init__.py").read_text()
    assert srv.state(pane) == "blocked"
    assert restarts_counted(srv) == counted  # a hand-over is no crash
    assert wait_for(lambda: gone(before["pid"]), timeout=10, message="the old sidecar ended")


def test_a_sidecar_keeps_watching_while_its_venv_is_rebuilt_and_hands_over_when_done(
        tmux_server, run_dir, plugin):
    """The venv rebuilt under a running sidecar as `plugin/ensure` does it (its lock folder
    beside the venv, `venv --clear`, pip), with no one to restart the sidecar: it goes on
    watching with the code it has (its bundled manifests deleted under it change nothing) and
    hands over only once the lock is gone."""
    srv = tmux_server
    folder, venv = plugin
    pane, before = plugin_up(srv, folder, venv)
    lock = Path(f"{venv}.installing")
    lock.mkdir()
    try:
        (lock / "pid").write_text(str(os.getpid()))
        assert subprocess.run([sys.executable, "-m", "venv", "--clear", venv]).returncode == 0
        a_change_to_the_package(folder, "rebuilt")
        built = subprocess.run([venv / "bin" / "python", "-m", "pip", "install", "-q",
                                "--disable-pip-version-check", folder], capture_output=True,
                               text=True, cwd=folder.parent)
        assert built.returncode == 0, built.stderr[-2000:]
        stamp_as_built(folder, venv)
        # a status written after the rebuild: the same sidecar, still watching the pane
        done = time.time()
        st = wait_for(lambda: (s := sidecar_status(srv)) and s["updated"] > done + 1 and s,
                      timeout=30, message="a status after the rebuild")
        assert st["pid"] == before["pid"] and watches(srv, pane, "blocked")
        said = doctor(srv, run_dir)  # it watches, with code being replaced: said, no problem
        assert "runs code being replaced" in said.stdout and not any(
            "stale" in p for p in problems(said)), said.stdout
    finally:
        shutil.rmtree(lock)
    after = wait_for(lambda: watches(srv, pane, "blocked", not_pid=before["pid"]), timeout=60,
                     interval=0.2, message="the hand-over once the lock is gone")
    assert "# rebuilt" in (Path(after["install"]["package"]) / "__init__.py").read_text()


def test_a_broken_new_install_leaves_the_old_sidecar_watching_and_doctor_says_so(
        tmux_server, run_dir, plugin):
    """A reinstall that does not run (a module that fails to import): the sidecar does not
    hand over to it (it would die), it keeps watching, `doctor` names the stale code and its
    fix; a good reinstall after it is taken up."""
    srv = tmux_server
    folder, venv = plugin
    pane, before = plugin_up(srv, folder, venv, segment=True)
    loop = folder / "tmux_agentstate" / "sidecar" / "loop.py"
    good = loop.read_text()

    def reinstall():
        out = subprocess.run([venv / "bin" / "python", "-m", "pip", "install", "-q", "--no-deps",
                              "--force-reinstall", "--disable-pip-version-check", folder],
                             capture_output=True, text=True, cwd=folder.parent)
        assert out.returncode == 0, out.stderr[-2000:]

    try:
        loop.write_text("raise ImportError('a broken release')\n" + good)
        reinstall()
        said = wait_for(lambda: [p for p in problems(doctor(srv, run_dir)) if "stale code" in p],
                        timeout=30, interval=1, message="doctor names the stale code")
        assert "fix: tmux-agentstate start --replace" in said[0]
        log = Runtime(srv.tmux.socket()).log_path
        wait_for(lambda: "does not import" in log.read_text(), timeout=30,
                 message="the sidecar saw the new install fail")
        assert watches(srv, pane, "blocked")["pid"] == before["pid"]  # still the old one, watching
    finally:  # a good release after it (and no broken venv left for the next test)
        loop.write_text(good)
        a_change_to_the_package(folder, "fixed")
        reinstall()
    after = wait_for(lambda: watches(srv, pane, "blocked", not_pid=before["pid"]), timeout=60,
                     interval=0.2, message="the hand-over to the fixed install")
    assert "# fixed" in (Path(after["install"]["package"]) / "__init__.py").read_text()
    healthy = doctor(srv, run_dir)
    assert healthy.returncode == 0, problems(healthy)


def test_the_plugin_loaded_from_another_folder_replaces_the_sidecar(tmux_server, run_dir, plugin,
                                                                    tmp_path):
    """The plugin moved (another TPM path, a second clone) and tmux.conf sourced again: the
    sidecar that runs from the old folder is replaced by the new folder's."""
    srv = tmux_server
    folder, venv = plugin
    pane, before = plugin_up(srv, folder, venv)
    moved = tmp_path / "elsewhere" / "tmux-agentstate"
    # its venv too: built, current, not rebuilt; not the ensure's transient state (an earlier
    # test's ensure may be taking its `.venv.failed` or its lock away while the copy runs)
    shutil.copytree(folder, moved, symlinks=True, ignore=shutil.ignore_patterns("*.failed", "*.installing"))
    srv.cmd("run-shell", str(moved / "plugin.tmux"))
    after = wait_for(lambda: watches(srv, pane, "blocked", not_pid=before["pid"]), timeout=60,
                     interval=0.2, message="a sidecar from the new folder")
    assert runs_from(after["pid"]) == str(moved / ".venv" / "bin" / "python")
    assert wait_for(lambda: gone(before["pid"]), timeout=10, message="the old sidecar ended")


# -- doctor: a running process is not a watched pane -----------------------------------------
def doctor(srv, run):
    env = dict(os.environ, XDG_RUNTIME_DIR=str(run))
    env.pop("TMUX", None)
    return subprocess.run([sys.executable, "-m", "tmux_agentstate", "doctor", "-L", srv.name],
                          capture_output=True, text=True, env=env)


def problems(out) -> list[str]:
    return [line for line in out.stdout.splitlines() if line.startswith("problem")]


def test_doctor_is_healthy_only_when_every_agent_pane_is_watched(tmux_server, run_dir,
                                                                 isolated_config):
    srv = tmux_server
    srv.cmd("set-option", "-g", "status-right", "#{agentstate} %H:%M")
    first = blocked_replay(srv)
    srv.cmd("run-shell", str(ROOT / "plugin.tmux"))
    st = wait_for(lambda: watches(srv, first, "blocked"), timeout=30, message="sidecar watching")
    out = doctor(srv, run_dir)
    assert out.returncode == 0 and not problems(out), out.stdout
    os.kill(st["pid"], signal.SIGSTOP)  # frozen: the process runs on, watching nothing new
    try:
        second = blocked_replay(srv)
        out = doctor(srv, run_dir)
        assert out.returncode == 1, out.stdout
        assert any(f"{second} (" in p and "does not watch it" in p and "fix: " in p
                   for p in problems(out)), out.stdout
        assert not any(f"{first} (" in p for p in problems(out))  # that one it does watch
        # its status is not written any more: frozen, said as such
        frozen = wait_for(lambda: [p for p in problems(doctor(srv, run_dir)) if "frozen" in p],
                          timeout=60, interval=2, message="doctor calls the sidecar frozen")
        assert "fix: tmux-agentstate stop" in frozen[0]
    finally:
        os.kill(st["pid"], signal.SIGCONT)
    # running again: it picks the new pane up, and doctor is healthy
    wait_for(lambda: doctor(srv, run_dir).returncode == 0, timeout=30, interval=1,
             message="healthy once the sidecar watches both panes")
    assert "the sidecar watches every agent pane (2)" in doctor(srv, run_dir).stdout
