"""The project as a user gets it: a wheel built from this checkout, installed into a fresh venv,
run from a folder outside the checkout (no PYTHONPATH, no editable finder). A packaging
regression (manifests left out, a module missing from the package list) fails here."""
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import wait_for
from tmux_agentstate.core.fixtures import load_index

ROOT = Path(__file__).resolve().parent.parent


def _run(*cmd, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory):
    """(venv folder, environment): the wheel of this checkout installed in a new venv."""
    base = tmp_path_factory.mktemp("wheel")
    built = _run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", base / "dist", ROOT)
    assert built.returncode == 0, built.stderr[-2000:]
    wheel = next((base / "dist").glob("tmux_agentstate-*.whl"))
    venv = base / "venv"
    assert _run(sys.executable, "-m", "venv", venv).returncode == 0
    installed = _run(venv / "bin" / "python", "-m", "pip", "install", "-q", wheel)
    assert installed.returncode == 0, installed.stderr[-2000:]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TMUX", "TMUX_PANE")}
    env["XDG_CONFIG_HOME"] = str(base / "config")  # no user manifests
    env["XDG_RUNTIME_DIR"] = str(base / "run")
    (base / "run").mkdir(mode=0o700)
    return venv, env, base


def test_the_wheel_ships_every_bundled_manifest(wheel_venv):
    venv, env, base = wheel_venv
    out = _run(venv / "bin" / "python", "-c",
               "import tmux_agentstate, tmux_agentstate.core.catalog as c; "
               "print(tmux_agentstate.__file__); print(' '.join(c.Catalog().names()))",
               env=env, cwd=base)
    assert out.returncode == 0, out.stderr
    where, names = out.stdout.splitlines()
    assert str(venv) in where and str(ROOT) not in where  # the installed copy, not the checkout
    bundled = sorted(p.stem for p in (ROOT / "manifests").glob("*.toml") if p.name != "index.toml")
    assert names.split() == bundled


def test_the_wheel_ships_the_plugins_launch_loads(wheel_venv):
    """`launch copilot` passes --plugin-dir, `launch opencode|kilo` a JS file, both inside the
    installed package: they must be there (package data, easily left out)."""
    venv, env, base = wheel_venv
    out = _run(venv / "bin" / "python", "-c",
               "import json, pathlib; from tmux_agentstate.hooks import launch as l; "
               "p = pathlib.Path(l.copilot_args([])[1]); "
               "m = json.loads((p / 'plugin.json').read_text()); "
               "print(p); print(sorted(json.loads((p / m['hooks']).read_text())['hooks'])); "
               "e, w = l.plugin_config_env('kilo', {}); print(json.loads(e['KILO_CONFIG_CONTENT'])['plugin'][0]); print(w)",
               env=env, cwd=base)
    assert out.returncode == 0, out.stderr
    copilot, events, js, warning = out.stdout.splitlines()
    for where in (copilot, js):
        assert str(venv) in where and str(ROOT) not in where
    assert "notification" in events and "agentStop" in events
    assert js.endswith("agentstate.js") and "export default" in Path(js).read_text()
    assert warning == "None"


def test_classify_from_the_wheel_one_fixture_per_agent(wheel_venv):
    venv, env, base = wheel_venv
    first: dict = {}
    for f in load_index():
        first.setdefault(f.agent, f)
    assert len(first) == len([p for p in (ROOT / "manifests").glob("*.toml") if p.name != "index.toml"])
    for agent, f in sorted(first.items()):
        out = _run(venv / "bin" / "tmux-agentstate", "classify", "--json", "--agent", agent,
                   "--size", f"{f.rows}x{f.cols}", f.path, env=env, cwd=base)
        assert out.returncode == 0, (agent, out.stderr)
        assert f'"state": "{f.state}"' in out.stdout, (agent, out.stdout)


def test_a_sidecar_from_the_wheel_marks_a_live_pane(wheel_venv, tmux_server):
    venv, env, base = wheel_venv
    srv = tmux_server
    py = venv / "bin" / "python"
    pane = srv.new_pane(f"env AGENTSTATE_AGENT=claude {py} -m tmux_agentstate.demo.fake_agent "
                        "--autopilot --seed 3 --speed 2 --tasks 50")
    started = _run(venv / "bin" / "tmux-agentstate", "start", "-L", srv.name, env=env, cwd=base)
    try:
        assert started.returncode == 0, started.stderr
        state = wait_for(lambda: srv.state(pane), timeout=15, message="@agentstate from the wheel")
        assert state in ("working", "idle", "blocked")
        assert srv.option(pane, "@agentstate_agent") == "claude"
    finally:
        _run(venv / "bin" / "tmux-agentstate", "stop", "-L", srv.name, env=env, cwd=base)
        time.sleep(0.1)


def test_a_host_streams_its_panes_from_the_wheel_over_ssh(wheel_venv, tmp_path):
    """A host with the wheel installed (and nothing else of ours): a login over real SSH runs
    its `stream`, which starts that host's sidecar from the wheel; its blocked pane arrives."""
    from conftest import replay_command
    from sshd import RemoteTmux, Sshd
    from test_stream import Link
    venv, env, base = wheel_venv
    blocked = next(f for f in load_index() if f.agent == "claude" and f.state == "blocked"
                   and f.renderer == "classic")
    sshd = Sshd(tmp_path / "sshd")
    host = RemoteTmux(tmp_path / "host", cols=blocked.cols, rows=blocked.rows)
    try:
        pane = host.cmd("new-window", "-P", "-F", "#{pane_id}", replay_command(blocked.path, "claude"))
        sshd.host("box", tmpdir=host.tmpdir)
        link = Link(sshd, "box", command=venv / "bin" / "tmux-agentstate")
        # the host's sidecar starts cold from the wheel's venv: generous under a loaded machine
        link.until(lambda: link.rows.rows.get(pane, {}).get("state") == "blocked", "blocked row",
                   timeout=90)
        assert link.messages[0]["t"] == "hello"
        assert link.close() == 0
        from tmux_agentstate.sidecar.runtime import Runtime
        sidecar = Runtime(host.socket).running_pid()  # the one the stream started: the wheel's
        assert sidecar and str(venv) in Path(f"/proc/{sidecar}/cmdline").read_text()
    finally:
        subprocess.run([venv / "bin" / "tmux-agentstate", "stop"], env=host.env, capture_output=True)
        host.kill()
        sshd.stop()
