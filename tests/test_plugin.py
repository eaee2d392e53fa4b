"""plugin.tmux in a real tmux server: formats, key, hooks beside the user's own, the first run
(a real venv built in the background), its failures, and `stop --clean`."""
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import TmuxServer, replay_command, wait_for
from tmux_agentstate.core.fixtures import load_index
from tmux_agentstate.sidecar.runtime import RESTARTS_MAX, Runtime, server_alive

ROOT = Path(__file__).resolve().parent.parent


def _cli(srv, run, *args):
    env = dict(os.environ, XDG_RUNTIME_DIR=str(run))
    env.pop("TMUX", None)
    return subprocess.run([sys.executable, "-m", "tmux_agentstate", *args, "-L", srv.name],
                          capture_output=True, text=True, env=env)


def no_pane_shows_an_error(srv) -> bool:
    """No run-shell error view: no pane in a mode, no 'returned' / 'command not found' text."""
    for pane in srv.cmd("list-panes", "-a", "-F", "#{pane_id} #{pane_in_mode}").splitlines():
        pane_id, in_mode = pane.split()
        text = srv.cmd("capture-pane", "-p", "-t", pane_id)
        if in_mode != "0" or "returned" in text or "not found" in text:
            return False
    return True


def test_plugin_wires_formats_key_hooks_and_starts_the_sidecar(tmux_server, run_dir):
    srv = tmux_server
    srv.cmd("set-option", "-g", "status-right", "#{agentstate} | %H:%M")
    srv.cmd("set-option", "-g", "window-status-format", "#I:#W#{agentstate_window}")
    srv.cmd("set-option", "-g", "@agentstate-icon-blocked", "#!")  # a '#' in an icon stays text
    srv.cmd("set-hook", "-g", "client-attached[0]", "display-message mine")
    srv.cmd("run-shell", str(ROOT / "plugin.tmux"))
    right = srv.cmd("show-options", "-gv", "status-right")
    assert right == "#{@agentstate_summary} | %H:%M" and "#(" not in right
    fmt = srv.cmd("show-options", "-gv", "window-status-format")
    assert "#{agentstate_window}" not in fmt and "#(" not in fmt
    hooks = srv.cmd("show-hooks", "-g")
    assert "client-attached[0] display-message mine" in hooks
    for hook in ("client-attached", "session-created", "client-detached"):
        assert f"{hook}[4242]" in hooks
    assert "plugin/ensure" in srv.cmd("list-keys", "-T", "prefix", "A")
    assert "--next" in srv.cmd("list-keys", "-T", "prefix", "a")  # the next-needs-you key
    # the plugin started one sidecar in the background for this server
    wait_for(lambda: _cli(srv, run_dir, "status").returncode == 0, timeout=15, message="sidecar running")
    # it publishes the badge's format: each state, as tmux expands it in a window
    wait_for(lambda: srv.cmd("show-options", "-gqv", "@agentstate_badge"), message="badge format")
    window = srv.cmd("display-message", "-p", "-t", "main", "#{window_id}")
    for state, text in (("blocked", "] #! #["), ("working", "] * #["), ("idle", "] - #[")):
        srv.cmd("set-option", "-w", "-t", window, "@agentstate_window", state)
        assert text in srv.cmd("display-message", "-p", "-t", window, "#{E:window-status-format}")
    srv.cmd("set-option", "-w", "-u", "-t", window, "@agentstate_window")
    assert srv.cmd("display-message", "-p", "-t", window, "#{E:window-status-format}") == "0:" + \
        srv.cmd("display-message", "-p", "-t", window, "#W")
    # a second start (e.g. the plugin sourced again) is a no-op
    again = _cli(srv, run_dir, "start")
    assert again.returncode == 0 and "already" in again.stdout
    assert no_pane_shows_an_error(srv)


def test_stop_clean_leaves_the_users_tmux_as_found(tmux_server, run_dir):
    srv = tmux_server
    srv.cmd("set-option", "-g", "status-right", "#{agentstate} | %H:%M")
    srv.cmd("set-option", "-g", "window-status-format", "#I:#W #{agentstate_window}")
    srv.cmd("set-hook", "-g", "client-attached[0]", "display-message mine")
    before = {k: srv.cmd("show-options", "-gv", k) for k in ("status-right", "window-status-format")}
    srv.cmd("run-shell", str(ROOT / "plugin.tmux"))
    wait_for(lambda: _cli(srv, run_dir, "status").returncode == 0, timeout=15, message="sidecar running")
    wait_for(lambda: srv.cmd("show-options", "-gqv", "@agentstate_badge"), message="badge format")
    out = _cli(srv, run_dir, "stop", "--clean")
    assert out.returncode == 0, out.stderr
    assert {k: srv.cmd("show-options", "-gv", k) for k in before} == before
    hooks = srv.cmd("show-hooks", "-g")
    assert "4242" not in hooks and "client-attached[0] display-message mine" in hooks
    assert "@agentstate" not in srv.cmd("show-options", "-g")
    assert "plugin/ensure" not in srv.cmd("list-keys", "-T", "prefix")
    assert _cli(srv, run_dir, "status").returncode == 3


# -- the first run, as TPM does it: no venv yet -------------------------------------------------
def fresh_venv(srv, tmp_path, python=None):
    venv = tmp_path / "plugin-venv"
    srv.cmd("set-option", "-g", "@agentstate-venv", str(venv))
    if python:
        srv.cmd("set-option", "-g", "@agentstate-python", str(python))
    srv.cmd("set-option", "-g", "status-right", "#{agentstate}")
    return venv


def summary(srv) -> str:
    return srv.cmd("show-options", "-gqv", "@agentstate_summary")


def test_first_run_installs_in_the_background_and_says_so_in_the_status_line(tmux_server, run_dir,
                                                                              tmp_path):
    srv = tmux_server
    venv = fresh_venv(srv, tmp_path)
    srv.cmd("run-shell", str(ROOT / "plugin.tmux"))
    # while the venv is built: the status segment says so; a client attaching meanwhile runs
    # our hooks, which stay silent (no 127 error in its pane)
    wait_for(lambda: "installing" in summary(srv), message="installing… in the status segment")
    srv.cmd("new-session", "-d", "-s", "later")  # session-created hook, venv not ready
    assert no_pane_shows_an_error(srv)
    wait_for(lambda: _cli(srv, run_dir, "status").returncode == 0, timeout=240, interval=0.5,
             message="venv built and sidecar started")
    assert (venv / "bin" / "python").exists() and (venv / ".agentstate-stamp").exists()
    # installed from the plugin folder as a wheel, not as an editable checkout
    where = subprocess.run([venv / "bin" / "python", "-c", "import tmux_agentstate; print(tmux_agentstate.__file__)"],
                           capture_output=True, text=True, cwd=tmp_path).stdout
    assert str(venv) in where
    wait_for(lambda: "installing" not in summary(srv), message="live summary replaces installing…")
    assert no_pane_shows_an_error(srv)


def fake_python(tmp_path, name, sitecustomize: str):
    """The machine's own Python, but with a sitecustomize that takes something away: what a
    user's python3 can be like (Debian without python3-venv, an old release)."""
    site = tmp_path / f"site-{name}"
    site.mkdir()
    (site / "sitecustomize.py").write_text(textwrap.dedent(sitecustomize))
    wrapper = tmp_path / name
    wrapper.write_text(f"#!/bin/sh\nPYTHONPATH={site} exec {sys.executable} \"$@\"\n")
    wrapper.chmod(0o755)
    return wrapper


NO_VENV = """
    import sys
    class _Hide:  # Debian ships ensurepip only in python3.X-venv
        def find_spec(self, name, path=None, target=None):
            if name == "ensurepip":
                raise ModuleNotFoundError("No module named 'ensurepip'", name=name)
    sys.meta_path.insert(0, _Hide())
"""
TOO_OLD = """
    import sys
    sys.version_info = (3, 8, 10, "final", 0)
"""


@pytest.mark.parametrize("kind, sitecustomize, said", [
    ("no-venv", NO_VENV, "has no venv module: install python3.11-venv"),
    ("too-old", TOO_OLD, "Python 3.8 is too old (3.9+ needed): set @agentstate-python"),
])
def test_a_failed_first_run_names_its_cause_and_fix_in_the_status_line_and_messages(
        tmux_server, run_dir, tmp_path, attached_client, kind, sitecustomize, said):
    srv = tmux_server
    said = said.replace("3.11", "%d.%d" % sys.version_info[:2])
    fresh_venv(srv, tmp_path, fake_python(tmp_path, kind, sitecustomize))
    client = attached_client()
    srv.cmd("run-shell", str(ROOT / "plugin.tmux"))
    # the segment has the short form (tests/test_doctor.py: it fits status-right-length); the
    # message, the whole line
    wait_for(lambda: "install failed (doctor)" in summary(srv), timeout=30, message="short form")
    wait_for(lambda: said in srv.cmd("show-messages", "-t", client.name()), message="in show-messages")
    wait_for(lambda: said in client.screen(), message="on the client's status line")
    assert no_pane_shows_an_error(srv)
    # it lasts until fixed: a client attaching later runs our hook, which says it again
    srv.cmd("new-session", "-d", "-s", "later")
    assert "install failed (doctor)" in summary(srv) and no_pane_shows_an_error(srv)


def test_no_package_index_is_named_as_the_cause(tmux_server, run_dir, tmp_path):
    srv = tmux_server
    fresh_venv(srv, tmp_path)
    # pip's own settings, pointed at a port where nothing listens on this machine
    srv.cmd("set-environment", "-g", "PIP_CONFIG_FILE", os.devnull)
    srv.cmd("set-environment", "-g", "PIP_INDEX_URL", "http://127.0.0.1:9/simple")
    srv.cmd("set-environment", "-g", "PIP_FIND_LINKS", "")
    srv.cmd("run-shell", str(ROOT / "plugin.tmux"))
    wait_for(lambda: "no package index reachable" in srv.cmd("show-options", "-gqv",
                                                             "@agentstate_install"),
             timeout=120, interval=0.5, message="index failure named")
    assert no_pane_shows_an_error(srv)


# -- self-healing: tmux's own client-detached hook brings a killed sidecar back ----------------
def _sidecar_pid(srv, run) -> int:
    out = _cli(srv, run, "status").stdout
    return int(out.split("(pid ")[1].split(")")[0]) if "(pid " in out else 0


def blocked_pane_with_plugin(srv) -> str:
    """A pane replaying a real blocked Claude Code capture, the plugin loaded, the sidecar up."""
    fx = next(f for f in load_index() if f.agent == "claude" and f.state == "blocked")
    pane = srv.new_pane(replay_command(fx.path, "claude"), rows=fx.rows, cols=fx.cols)
    srv.cmd("run-shell", str(ROOT / "plugin.tmux"))
    wait_for(lambda: srv.state(pane) == "blocked", timeout=15, message="blocked")
    return pane


def test_a_killed_sidecar_comes_back_and_a_stopped_one_stays_stopped(tmux_server, run_dir):
    srv = tmux_server
    pane = blocked_pane_with_plugin(srv)
    for _ in range(2):
        pid = _sidecar_pid(srv, run_dir)
        os.kill(pid, signal.SIGKILL)
        # a dead watcher's verdict must not stand: make it wrong, the new sidecar makes it right
        srv.cmd("set-option", "-p", "-t", pane, "@agentstate", "idle")
        wait_for(lambda: srv.state(pane) == "blocked", timeout=15, message="right again, no user action")
        assert _sidecar_pid(srv, run_dir) not in (0, pid)
    assert no_pane_shows_an_error(srv)
    # stopped on purpose: the hooks (its control client leaving, a client attaching) leave it
    assert _cli(srv, run_dir, "stop").returncode == 0
    srv.cmd("new-session", "-d", "-s", "later")
    time.sleep(1.5)
    assert _sidecar_pid(srv, run_dir) == 0
    assert srv.state(pane) == ""  # and it left no verdict behind


def test_a_sidecar_that_keeps_dying_is_left_down_and_says_so(tmux_server, run_dir):
    srv = tmux_server
    pane = blocked_pane_with_plugin(srv)
    rt = Runtime(srv.tmux.socket())
    now = time.time()
    (rt.dir / "restarts").write_text(" ".join(str(now) for _ in range(RESTARTS_MAX)))
    os.kill(_sidecar_pid(srv, run_dir), signal.SIGKILL)
    wait_for(lambda: "watcher down" in summary(srv), timeout=15, message="the segment says it is down")
    assert srv.state(pane) == ""  # no verdict of a dead watcher stands as current
    assert _sidecar_pid(srv, run_dir) == 0


def test_kill_server_ends_the_server_after_a_killed_sidecar(tmux_server, tmp_path):
    """The sidecar's control client dies with it. One left behind by `kill -9` could race a
    `kill-server` right after: tmux 3.3a then waited on it for good, and the server never quit
    (1 run in 5). Ten rounds of kill -9 and `kill-server`: each server ends."""
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    for n in range(10):
        srv = TmuxServer(f"{tmux_server.name}-k{n}")
        try:
            assert _cli(srv, run, "start").returncode == 0
            wait_for(lambda: "1" in srv.cmd("list-clients", "-F", "#{client_control_mode}"),
                     message="the sidecar's control client")
            socket = srv.tmux.socket()
            os.kill(_sidecar_pid(srv, run), signal.SIGKILL)
            srv.kill()
            wait_for(lambda: not server_alive(socket), timeout=5, message=f"server {n} gone")
        finally:
            subprocess.run(["pkill", "-KILL", "-f", f"tmux -L {srv.name} "], capture_output=True)


def test_a_runtime_folder_goes_with_its_server(tmux_server, tmp_path):
    """The sidecar removes its folder when the server ends; a folder left by a killed sidecar
    is removed by the next start on any server."""
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    first, second = tmux_server, TmuxServer(f"{tmux_server.name}-b")
    try:
        folders = {}
        for srv in (first, second):
            assert _cli(srv, run, "start").returncode == 0
            folders[srv.name] = Runtime(srv.tmux.socket()).dir
            assert folders[srv.name].is_dir()
        first.kill()  # its sidecar sees the server go and takes its folder with it
        wait_for(lambda: not folders[first.name].exists(), timeout=15, message="folder removed")
        os.kill(_sidecar_pid(second, run), signal.SIGKILL)  # no sidecar left to clean up
        second_socket = second.tmux.socket()
        second.kill()
        # kill-server returns before the server has quit; until then its socket answers and
        # its folder is rightly kept
        wait_for(lambda: not server_alive(second_socket), message="the server gone")
        assert folders[second.name].exists()
        third = TmuxServer(f"{tmux_server.name}-c")
        try:
            assert _cli(third, run, "start").returncode == 0
            assert not folders[second.name].exists(), second_socket
            assert Runtime(third.tmux.socket()).dir.is_dir()  # its own stays
            _cli(third, run, "stop")
        finally:
            third.kill()
    finally:
        second.kill()


# -- our styles never reset the user's theme around them ----------------------------------------
def _say_in_segment(srv, run):
    from tmux_agentstate.cli.sidecar import _say_in_segment
    _say_in_segment(srv.tmux, "watcher down (test)")


def _ensure_fails(srv, run):
    """plugin/ensure's own word in the segment: an install that cannot start (no such python)."""
    srv.cmd("set-option", "-g", "@agentstate-venv", str(run / "no-venv"))
    srv.cmd("set-option", "-g", "@agentstate-python", "no-such-python3")
    subprocess.run([str(ROOT / "plugin" / "ensure"), "-S", srv.tmux.socket(), "--load"], check=True)


def _sidecar_summary(srv, run):
    from tmux_agentstate.sidecar.config import Config
    srv.cmd("set-option", "-g", "@agentstate_summary",
            Config().render_summary({"blocked": 1, "working": 2}))


@pytest.mark.parametrize("publish", [_sidecar_summary, _say_in_segment, _ensure_fails],
                         ids=["summary", "watcher-down", "ensure-failure"])
def test_text_after_our_segment_and_badge_keeps_the_users_theme(tmux_server, tmp_path, publish):
    """A themed status line (status-style, and #[fg=…] around our placeholders), drawn by a real
    client: the text right after our segment and after a window badge is in the theme's style,
    not reset to the bar's default by our own #[default]."""
    from tmux_agentstate.sidecar.config import Config
    import pyte
    from conftest import OuterClient
    srv = tmux_server
    srv.cmd("set-option", "-g", "status-style", "bg=colour22,fg=colour250")
    srv.cmd("set-option", "-g", "status-left", "")
    srv.cmd("set-option", "-g", "status-right-length", "100")  # the whole failure text, then R
    srv.cmd("set-option", "-g", "status-right", "#[fg=colour201,bg=colour17]L#{agentstate}R")
    for name in ("window-status-format", "window-status-current-format"):
        srv.cmd("set-option", "-g", name, "#[fg=colour201,bg=colour17]W#{agentstate_window}X")
    srv.cmd("set-option", "-g", "@agentstate-default-segment", "off")
    srv.cmd("set-option", "-g", "@agentstate-popup-key", "")
    srv.cmd("set-option", "-g", "@agentstate-next-key", "")
    # the formats as plugin.tmux rewrites them (no sidecar here: what the segment shows is ours)
    subprocess.run(["bash", str(ROOT / "tmux_agentstate" / "plugin" / "wire"), srv.tmux.socket(),
                    "true"], check=True)
    for hook in ("client-attached", "session-created", "client-detached"):
        srv.cmd("set-hook", "-gu", f"{hook}[4242]")
    srv.cmd("set-option", "-g", "@agentstate_badge", Config().badge_format())
    srv.cmd("set-option", "-w", "-t", "main", "@agentstate_window", "blocked")
    run = tmp_path / "run"
    run.mkdir()
    publish(srv, run)
    wait_for(lambda: "agentstate" in summary(srv) or "!1" in summary(srv), message="a segment")
    client = OuterClient(srv, "main", cols=120, rows=6)
    try:
        def status_row():
            lines = client.screen(escapes=True).rstrip("\n").split("\n")
            screen = pyte.Screen(120, len(lines))
            pyte.Stream(screen).feed("\r\n".join(lines))
            row = screen.buffer[len(lines) - 1]
            return row, "".join(row[x].data for x in range(120))

        wait_for(lambda: status_row()[1].rstrip().endswith("R") and "!" in status_row()[1],
                 message=f"segment and badge drawn: {status_row()[1]!r}")
        cells, text = status_row()

        def style(at):
            return cells[at].fg, cells[at].bg

        theme = style(text.index("W"))
        assert style(text.rindex("L")) == theme  # the theme as the user set it
        assert style(text.index("!")) != theme   # our pill has its own style
        assert style(text.index("X")) == theme, (text, style(text.index("X")))
        assert style(text.rindex("R")) == theme, (text, style(text.rindex("R")))
    finally:
        client.close()
