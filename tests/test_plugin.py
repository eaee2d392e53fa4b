"""plugin.tmux in a real tmux server: formats, key, hooks beside the user's own, sidecar start."""
import os
import subprocess
import sys
from pathlib import Path

from conftest import wait_for

ROOT = Path(__file__).resolve().parent.parent


def test_plugin_wires_formats_key_hooks_and_starts_the_sidecar(tmux_server, tmp_path, monkeypatch):
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    srv = tmux_server
    srv.cmd("set-environment", "-g", "XDG_RUNTIME_DIR", str(run))
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
    assert "client-attached[4242]" in hooks and "session-created[4242]" in hooks
    assert "display-popup" in srv.cmd("list-keys", "-T", "prefix", "A")
    # the badge for each state, as tmux expands it
    window = srv.cmd("display-message", "-p", "-t", "main", "#{window_id}")
    for state, text in (("blocked", "]#!#["), ("working", "]*#["), ("idle", "]-#[")):
        srv.cmd("set-option", "-w", "-t", window, "@agentstate_window", state)
        assert text in srv.cmd("display-message", "-p", "-t", window, "#{E:window-status-format}")
    srv.cmd("set-option", "-w", "-u", "-t", window, "@agentstate_window")
    assert srv.cmd("display-message", "-p", "-t", window, "#{E:window-status-format}") == "0:" + \
        srv.cmd("display-message", "-p", "-t", window, "#W")
    # the plugin started one sidecar in the background for this server
    env = dict(os.environ, XDG_RUNTIME_DIR=str(run))
    env.pop("TMUX", None)
    status = lambda: subprocess.run([sys.executable, "-m", "tmux_agentstate", "status", "-L", srv.name],  # noqa: E731
                                    capture_output=True, text=True, env=env)
    wait_for(lambda: status().returncode == 0, timeout=15, message="sidecar running")
    # a second start (e.g. the plugin sourced again) is a no-op
    again = subprocess.run([sys.executable, "-m", "tmux_agentstate", "start", "-L", srv.name],
                           capture_output=True, text=True, env=env)
    assert again.returncode == 0 and "already" in again.stdout
    subprocess.run([sys.executable, "-m", "tmux_agentstate", "stop", "-L", srv.name], env=env,
                   capture_output=True)
