"""`tmux-agentstate tmux-init`, as a pip/pipx user gets it: the wheel installed in a fresh venv,
one `run-shell` line in a real tmux server. It wires what plugin.tmux wires (compared on two
servers, modulo the command each runs), the keys and hooks it binds work from the installed
interpreter, running it again changes nothing, and `stop --clean` takes it all out."""
import os
import re
import signal
import subprocess
from pathlib import Path

from conftest import TmuxServer, wait_for
from test_wheel import wheel_venv  # noqa: F401  (the fixture: this checkout's wheel, installed)

ROOT = Path(__file__).resolve().parent.parent
USERS_CONFIG = """\
set -g prefix C-a
unbind C-b
bind a send-prefix
set -g status-right '#{agentstate} | %H:%M'
set -g window-status-format '#I:#W#{agentstate_window}'
set -g window-status-current-format '#I:#W*#{agentstate_window}'
"""


def installed(wheel_venv, *args, path=None):  # noqa: F811
    venv, env, _ = wheel_venv
    env = dict(env, PATH=path if path is not None else env["PATH"])
    return subprocess.run([str(venv / "bin" / "python"), "-m", "tmux_agentstate", *args],
                          capture_output=True, text=True, env=env, cwd="/")


def server(name, tmp_path, run) -> TmuxServer:
    srv = TmuxServer(name)
    srv.cmd("set-environment", "-g", "XDG_RUNTIME_DIR", str(run))
    conf = tmp_path / f"{name}.conf"
    conf.write_text(USERS_CONFIG)
    srv.cmd("source-file", str(conf))
    return srv


def wiring(srv, command: str) -> dict:
    """What is wired, with the command our keys and hooks run written as CMD."""
    def norm(text):
        return text.replace(command, "CMD")
    hooks = sorted(norm(h) for h in srv.cmd("show-hooks", "-g").splitlines() if "[4242]" in h)
    keys = {k: norm(srv.cmd("list-keys", "-T", "prefix", k)) for k in ("A", "a")}
    options = {o: srv.cmd("show-options", "-gqv", o) for o in
               ("status-left", "status-right", "window-status-format",
                "window-status-current-format", "@agentstate_saved_popup_key",
                "@agentstate_saved_next_key", "@agentstate_default_segment")}
    return {"hooks": hooks, "keys": keys, "options": options}


def sidecar_pid(wheel_venv, srv) -> int:  # noqa: F811
    out = installed(wheel_venv, "status", "-L", srv.name).stdout
    m = re.search(r"\(pid (\d+)\)", out)
    return int(m.group(1)) if m else 0


def test_tmux_init_wires_what_plugin_tmux_wires_and_stop_clean_takes_it_out(
        wheel_venv, tmux_server, tmp_path):  # noqa: F811
    venv, env, _ = wheel_venv
    run = Path(env["XDG_RUNTIME_DIR"])
    tmux_server.kill()  # two servers of our own, each loaded with the same user config
    by_plugin = server(f"{tmux_server.name}-tpm", tmp_path, run)
    by_init = server(f"{tmux_server.name}-pip", tmp_path, run)
    try:
        before = by_init.cmd("list-keys", "-T", "prefix")
        before_formats = {o: by_init.cmd("show-options", "-gv", o) for o in
                          ("status-right", "window-status-format", "window-status-current-format")}
        by_plugin.cmd("run-shell", str(ROOT / "plugin.tmux"))
        by_init.cmd("run-shell", f"{venv}/bin/tmux-agentstate tmux-init")
        plugin_cmd = f"{ROOT}/plugin/ensure -S {by_plugin.tmux.socket()}"
        init_cmd = f"{venv}/bin/python -m tmux_agentstate tmux-init -S {by_init.tmux.socket()}"
        wired = wiring(by_init, init_cmd)
        assert wired == wiring(by_plugin, plugin_cmd)
        assert wired["keys"]["a"] == "bind-key -T prefix a send-prefix"  # the user's, kept
        assert "CMD --popup" in wired["keys"]["A"] and len(wired["hooks"]) == 3
        by_init.cmd("run-shell", f"{venv}/bin/tmux-agentstate tmux-init")  # twice: harmless
        assert wiring(by_init, init_cmd) == wired
        # the sidecar runs from the installed package, and its hooks bring it back
        wait_for(lambda: sidecar_pid(wheel_venv, by_init), timeout=20, message="sidecar started")
        pid = sidecar_pid(wheel_venv, by_init)
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: sidecar_pid(wheel_venv, by_init) not in (0, pid), timeout=20,
                 message="a killed sidecar brought back by the installed-form hook")
        for pane in by_init.cmd("list-panes", "-a", "-F", "#{pane_in_mode}").split():
            assert pane == "0"  # no run-shell output or error view over a pane
        out = installed(wheel_venv, "stop", "--clean", "-L", by_init.name)
        assert out.returncode == 0, out.stderr
        assert "4242" not in by_init.cmd("show-hooks", "-g")
        assert by_init.cmd("list-keys", "-T", "prefix") == before
        assert {o: by_init.cmd("show-options", "-gv", o) for o in before_formats} == before_formats
    finally:
        for srv in (by_plugin, by_init):
            installed(wheel_venv, "stop", "-L", srv.name)
            srv.kill()


def test_the_installed_keys_run_the_popup_and_next(wheel_venv, tmux_server,
                                                    attached_client):  # noqa: F811
    venv, env, _ = wheel_venv
    srv = tmux_server
    srv.cmd("set-environment", "-g", "XDG_RUNTIME_DIR", env["XDG_RUNTIME_DIR"])
    try:
        srv.cmd("run-shell", f"{venv}/bin/tmux-agentstate tmux-init")
        client = attached_client()
        srv.cmd("send-keys", "-t", "main", "")  # nothing typed anywhere: the keys act on clients
        # what prefix + a and prefix + A run, for this client, as tmux runs them
        for k in ("a", "A"):
            line = srv.cmd("list-keys", "-T", "prefix", k)
            command = line.split("run-shell -b ", 1)[1].strip('"').replace("#{client_name}",
                                                                          client.name())
            srv.cmd("run-shell", "-b", command)
            if k == "a":
                wait_for(lambda: "no agent needs you" in srv.cmd("show-messages"),
                         message="prefix + a said so on the client")
        wait_for(lambda: "agents" in client.screen() and "│" in client.screen(), timeout=15,
                 message="the popup drawn on the client")
    finally:
        installed(wheel_venv, "stop", "-L", srv.name)


def test_doctor_names_the_command_path_when_it_is_not_on_path(wheel_venv, tmux_server):  # noqa: F811
    venv, env, _ = wheel_venv
    bare = ":".join(p for p in env["PATH"].split(":") if not Path(p, "tmux-agentstate").exists())
    out = installed(wheel_venv, "doctor", "-L", tmux_server.name, path=bare).stdout
    assert f"tmux-agentstate is not on PATH; it is {venv}/bin/tmux-agentstate" in out
    out = installed(wheel_venv, "doctor", "-L", tmux_server.name,
                    path=f"{venv}/bin:{bare}").stdout
    assert f"tmux-agentstate command: {venv}/bin/tmux-agentstate" in out
