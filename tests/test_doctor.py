"""`tmux-agentstate doctor` against real tmux servers: healthy, and broken in the ways users
break it. Exit 0 only when healthy; each problem is one line with its fix."""
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import OuterClient, wait_for
from tmux_agentstate.sidecar.runtime import RESTARTS_MAX, Runtime
from tmux_agentstate.core.catalog import BUNDLED_DIR, Catalog
from test_plugin import NO_VENV, fake_python, fresh_venv

ROOT = Path(__file__).resolve().parent.parent


def doctor(srv, run, path_dir=None, config=None):
    env = dict(os.environ, XDG_RUNTIME_DIR=str(run))
    env.pop("TMUX", None)
    if path_dir:
        env["PATH"] = f"{path_dir}:{env['PATH']}"
    if config:
        env["XDG_CONFIG_HOME"] = str(config)
    return subprocess.run([sys.executable, "-m", "tmux_agentstate", "doctor", "-L", srv.name],
                          capture_output=True, text=True, env=env)


def problems(out) -> list[str]:
    return [line for line in out.stdout.splitlines() if line.startswith("problem")]


def loaded(srv, run):
    """A server as the README sets it up: placeholders, then the plugin, sidecar running."""
    srv.cmd("set-environment", "-g", "XDG_RUNTIME_DIR", str(run))
    srv.cmd("set-option", "-g", "status-right", "#{agentstate} %H:%M")
    srv.cmd("set-option", "-g", "window-status-format", "#I:#W #{agentstate_window}")
    srv.cmd("run-shell", str(ROOT / "plugin.tmux"))
    wait_for(lambda: "sidecar running" in doctor(srv, run).stdout, timeout=15, message="sidecar up")


def test_healthy(tmux_server, tmp_path, isolated_config):
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    loaded(tmux_server, run)
    # an agent CLI on PATH in a release the fixtures do not cover: a note, not a problem
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude").write_text("#!/bin/sh\necho '2.0.1 (Claude Code)'\n")
    (bin_dir / "claude").chmod(0o755)
    out = doctor(tmux_server, run, path_dir=bin_dir)
    assert out.returncode == 0, out.stdout
    assert out.stdout.rstrip().endswith("healthy") and not problems(out)
    claude_v = Catalog([BUNDLED_DIR]).get("claude").version
    for what in ("tmux 3", f"manifest claude v{claude_v} (bundled", "#{agentstate} interpolated in status-right",
                 "#{agentstate_window} interpolated in window-status-format",
                 "prefix + A opens the agent list", "client-detached", "is private",
                 "sidecar running"):
        assert what in out.stdout, what
    assert "claude 2.0.1" in out.stdout and "the fixtures cover 2.1.332" in out.stdout


def test_sidecar_down_formats_not_interpolated_and_a_broken_user_manifest(tmux_server, tmp_path,
                                                                          isolated_config):
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    loaded(tmux_server, run)
    tmux_server.cmd("set-option", "-g", "status-left", "#{agentstate}")  # set after the plugin ran
    user = isolated_config / "tmux-agentstate" / "manifests"
    user.mkdir(parents=True)
    (user / "claude.toml").write_text("name = 'claude'\n[[rules]]\nid = 'x'\nstate = 'blocked'\nany = ['(']\n")
    subprocess.run([sys.executable, "-m", "tmux_agentstate", "stop", "-L", tmux_server.name],
                   env=dict(os.environ, XDG_RUNTIME_DIR=str(run)), capture_output=True)
    out = doctor(tmux_server, run, config=isolated_config)
    assert out.returncode == 1
    found = problems(out)
    assert any("status-left" in p and "did not interpolate" in p and "fix: " in p for p in found)
    assert any("stopped" in p and "fix: tmux-agentstate start" in p for p in found)
    assert any("claude.toml" in p and "bad regex" in p for p in found)
    assert out.stdout.rstrip().endswith(f"{len(found)} problem(s)")


def test_a_failed_plugin_install(tmux_server, tmp_path):
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    srv = tmux_server
    srv.cmd("set-environment", "-g", "XDG_RUNTIME_DIR", str(run))
    fresh_venv(srv, tmp_path, fake_python(tmp_path, "no-venv", NO_VENV))
    srv.cmd("run-shell", str(ROOT / "plugin.tmux"))
    wait_for(lambda: "no venv module" in doctor(srv, run).stdout, timeout=30, message="install failure")
    out = doctor(srv, run)
    assert out.returncode == 1
    assert any("the plugin's install failed" in p and "install python3" in p for p in problems(out))


def test_no_server(tmp_path):
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    env = dict(os.environ, XDG_RUNTIME_DIR=str(run))
    env.pop("TMUX", None)
    out = subprocess.run([sys.executable, "-m", "tmux_agentstate", "doctor", "-L", "no-such-server-here"],
                         capture_output=True, text=True, env=env)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert any("no tmux server" in p for p in problems(out))
    assert "manifest claude" in out.stdout  # the checks that need no server still ran


def test_bad_option_values_and_a_misspelt_option_are_named(tmux_server, tmp_path, attached_client):
    """Values the sidecar cannot use: it runs with the defaults, says so once to the attached
    client (kept in show-messages) and in its log, and doctor names each with its fix; a
    misspelt option name is named with the closest real one."""
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    srv = tmux_server
    attached_client()
    srv.cmd("set-option", "-g", "@agentstate-interval", "banana")
    srv.cmd("set-option", "-g", "@agentstate-intake", "foo")
    srv.cmd("set-option", "-g", "@agentstate-notifyy", "off")
    env = dict(os.environ, XDG_RUNTIME_DIR=str(run))
    env.pop("TMUX", None)
    try:
        started = subprocess.run([sys.executable, "-m", "tmux_agentstate", "start", "-L", srv.name],
                                 capture_output=True, text=True, env=env)
        assert started.returncode == 0, started.stderr
        out = doctor(srv, run)
        assert out.returncode == 1 and "sidecar running" in out.stdout, out.stdout
        found = problems(out)
        assert any("@agentstate-interval 'banana'" in p and "using 0.7" in p and "fix: " in p
                   for p in found), found
        assert any("@agentstate-intake 'foo'" in p and "emulate" in p for p in found), found
        assert any("@agentstate-notifyy" in p and "did you mean @agentstate-notify?" in p
                   for p in found), found
        messages = wait_for(lambda: "\n".join(l for l in srv.cmd("show-messages").splitlines()
                                              if " message: tmux-agentstate: option(s) not used" in l),
                            message="the message to the client")
        assert "@agentstate-interval 'banana'" in messages and "@agentstate-intake 'foo'" in messages
        log = Runtime(srv.tmux.socket()).log_path
        wait_for(lambda: log.exists() and "every 0.70s by emulate" in log.read_text(),
                 message="the sidecar runs with the defaults")
        assert "option @agentstate-interval 'banana'" in log.read_text()
        status = Runtime(srv.tmux.socket()).read_status
        wait_for(lambda: (status() or {}).get("sweeps", 0) >= 6, message="a few sweeps")
        said = [l for l in srv.cmd("show-messages").splitlines()
                if " message: tmux-agentstate: option(s) not used" in l]
        assert len(said) == 1, said  # once per start, not per sweep
    finally:
        subprocess.run([sys.executable, "-m", "tmux_agentstate", "stop", "-L", srv.name],
                       capture_output=True, env=env)


def status_line(client) -> str:
    return client.screen().rstrip("\n").split("\n")[-1]


def segment_visible(srv) -> str:
    """What @agentstate_summary shows, its styles taken out."""
    return re.sub(r"#\[[^]]*\]", "", srv.cmd("show-options", "-gqv", "@agentstate_summary")).strip()


@pytest.mark.parametrize("fault", ["install failed", "watcher down"])
def test_status_line_errors_fit_the_default_status_right_length(tmux_server, tmp_path,
                                                               attached_client, fault):
    """A real client draws the status line with tmux's default status-right-length (40): the
    segment's short form shows whole; the whole line is in the message (show-messages) and in
    doctor."""
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    srv = tmux_server
    srv.cmd("set-environment", "-g", "XDG_RUNTIME_DIR", str(run))
    assert srv.cmd("show-options", "-gv", "status-right-length") == "40"  # tmux's default
    if fault == "install failed":
        fresh_venv(srv, tmp_path, fake_python(tmp_path, "no-venv", NO_VENV))
        whole = "has no venv module: install python"
    else:
        whole = "it stopped 5 times in 60 s"
    srv.cmd("set-option", "-g", "status-right", "#{agentstate} %H:%M")
    client = attached_client(cols=120)
    srv.cmd("run-shell", str(ROOT / "plugin.tmux"))
    if fault == "watcher down":  # it keeps dying: the hooks leave it down
        rt = Runtime(srv.tmux.socket())
        wait_for(lambda: rt.running_pid() and srv.cmd("show-options", "-gqv", "@agentstate_badge"),
                 timeout=15, message="sidecar up, its control client attached")
        (rt.dir / "restarts").write_text(" ".join([str(time.time())] * RESTARTS_MAX))
        os.kill(rt.running_pid(), signal.SIGKILL)
    wait_for(lambda: f"agentstate: {fault} (doctor)" in segment_visible(srv), timeout=30,
             message=f"the short form in the segment: {segment_visible(srv)!r}")
    wait_for(lambda: whole in srv.cmd("show-messages"), message="the whole line in a message")
    # the message (the whole line) covers the status line for a while; then the segment shows
    wait_for(lambda: segment_visible(srv) in status_line(client), timeout=30,
             message=f"{segment_visible(srv)!r} whole on the status line: {status_line(client)!r}")
    assert f"agentstate: {fault} (doctor)" in status_line(client)
    out = doctor(srv, run)
    assert out.returncode == 1, out.stdout
    assert all(part in out.stdout for part in whole.split(": ")), out.stdout  # cause; fix


def test_bad_options_are_told_to_the_first_client_when_none_was_attached(tmux_server, run_dir):
    """A server started with no client (at boot): the sidecar's message waits for the first
    client to attach (our client-attached hook), and is told once."""
    srv = tmux_server
    srv.cmd("set-option", "-g", "@agentstate-intake", "foo")
    srv.cmd("run-shell", str(ROOT / "plugin.tmux"))
    wait_for(lambda: Runtime(srv.tmux.socket()).running_pid(), timeout=15, message="sidecar up")
    wait_for(lambda: Runtime(srv.tmux.socket()).untold_path.exists(), message="kept for later")
    said = lambda: [l for l in srv.cmd("show-messages").splitlines()  # noqa: E731
                    if " message: tmux-agentstate: option(s) not used" in l]
    client = OuterClient(srv)
    try:
        wait_for(said, timeout=15, message="told to the client that attached")
        assert "@agentstate-intake 'foo'" in said()[0]
        srv.cmd("new-session", "-d", "-s", "later")  # our hooks run again: told once only
        time.sleep(1.0)
        assert len(said()) == 1, said()
    finally:
        client.close()


def test_an_agent_known_by_its_command_line_only_is_checked_on_path(tmp_path, monkeypatch):
    """Hermes Agent has no `commands` (Meta's Hermes JS engine is also a `hermes` binary): doctor
    looks its name up on PATH, tells its release from the venv's dist-info when the program there
    is its console script, and says so when it is another program of that name."""
    from tmux_agentstate.plugin.doctor_agents import check_agents
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    (manifests / "hermes.toml").write_text((BUNDLED_DIR / "hermes.toml").read_text())
    catalog = Catalog([manifests])
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    info = venv / "lib" / "python3.12" / "site-packages" / "hermes_agent-0.19.0.dist-info"
    info.mkdir(parents=True)
    (info / "entry_points.txt").write_text("[console_scripts]\nhermes = hermes_cli.main:main\n")
    script = venv / "bin" / "hermes"
    script.write_text(f"#!{venv}/bin/python3.12\nimport sys\nsys.exit(1)\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{venv / 'bin'}:/usr/bin:/bin")
    lines = [f.line() for f in check_agents(catalog)]
    assert lines == [f"ok      hermes 0.19.0 ({script}): the fixtures cover it"], lines
    engine = tmp_path / "engine"
    engine.mkdir()
    (engine / "hermes").write_bytes(b"\x7fELF\x02\x01\x01" + bytes(64))  # a native binary
    (engine / "hermes").chmod(0o755)
    monkeypatch.setenv("PATH", f"{engine}:/usr/bin:/bin")
    lines = [f.line() for f in check_agents(catalog)]
    assert lines == [f"note    hermes ({engine / 'hermes'}): another program of that name, "
                     "not Hermes Agent"], lines


def test_asking_an_agent_cli_its_version_leaves_nothing_in_the_users_folder(tmp_path, monkeypatch):
    """Letta Code makes `.letta/` in its working folder even for `--version`: doctor asks in an
    empty folder of its own, so the folder doctor runs in stays as it was."""
    from tmux_agentstate import procs
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    cli = bin_dir / "letta"
    cli.write_text("#!/bin/sh\nmkdir -p .letta && echo made > .letta/.lettaignore\necho 0.25.9\n")
    cli.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    assert procs.installed_version("letta") == (str(cli), "0.25.9")
    assert list(work.iterdir()) == []
