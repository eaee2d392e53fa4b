"""Version awareness (issue 12 item 4): the agent's release comes from the package it runs out
of (npm's package.json, a venv's dist-info); the sidecar publishes it, and `list --json` and
`explain` say whether the fixtures cover it."""
import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import wait_for
from tmux_agentstate import procs
from tmux_agentstate.core.catalog import Catalog


def npm_package(root: Path, name: str, version: str, script: str = "cli.py") -> Path:
    pkg = root.joinpath("node_modules", *name.split("/"))
    pkg.mkdir(parents=True)
    (pkg / "package.json").write_text(json.dumps({"name": name, "version": version}))
    (pkg / "node_modules" / "dep").mkdir(parents=True)  # a dependency of its own: not it
    (pkg / "node_modules" / "dep" / "package.json").write_text('{"version": "0.0.1"}')
    (pkg / "dist").mkdir()
    (pkg / "dist" / script).write_text("print('agent')\n")
    return pkg / "dist" / script


def fg(*cmdline: str, children=()) -> procs.Foreground:
    return procs.Foreground(0, os.path.basename(cmdline[0]), tuple(cmdline), None,
                            tuple(children), ())


def test_the_release_comes_from_the_package_it_runs_out_of(tmp_path):
    scoped = npm_package(tmp_path / "a", "@acme/agent", "2.0.77")
    plain = npm_package(tmp_path / "b", "opencode-linux-x64", "1.0.185")
    assert procs.agent_version(fg("node", str(scoped))) == "2.0.77"
    assert procs.agent_version(fg(str(plain))) == "1.0.185"
    # a wrapper: the agent one level down
    assert procs.agent_version(fg("sh", "-c", "x", children=[("node", ("node", str(scoped)))])) == "2.0.77"
    # through a symlink (npm's .bin/)
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "agent").symlink_to(scoped)
    assert procs.agent_version(fg("node", str(tmp_path / "bin" / "agent"))) == "2.0.77"
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (venv / "bin" / "aider").write_text("#!python\n")
    site = venv / "lib" / "python3.11" / "site-packages"
    (site / "aider_chat-0.86.2.dist-info").mkdir(parents=True)
    (site / "aider_chat-0.86.2.dist-info" / "entry_points.txt").write_text(
        "[console_scripts]\naider = aider.main:main\n")
    assert procs.agent_version(fg(sys.executable, str(venv / "bin" / "aider"))) == "0.86.2"
    # the interpreter is no console script, whatever distribution starts with its name
    (site / "python_dateutil-2.9.0.dist-info").mkdir()
    (site / "python_dateutil-2.9.0.dist-info" / "entry_points.txt").write_text("")
    (venv / "bin" / "python").write_text("")
    assert procs.agent_version(fg(str(venv / "bin" / "python"), "-m", "aider")) is None
    assert procs.agent_version(fg("sleep", "600")) is None
    assert procs.agent_version(fg(sys.executable, str(tmp_path / "nowhere.py"))) is None
    broken = npm_package(tmp_path / "c", "broken", "1.0.0")
    (broken.parent.parent / "package.json").write_text("{not json")
    assert procs.agent_version(fg("node", str(broken))) is None
    assert procs.agent_version(None) is None


def test_the_sidecar_publishes_it_and_list_and_explain_tell_if_fixtures_cover_it(
        tmux_server, sidecar, tmp_path):
    script = npm_package(tmp_path, "@acme/agent", "9.9.9")
    script.write_text("import time\nprint('> ', end='', flush=True)\ntime.sleep(600)\n")
    pane = tmux_server.new_pane(f"env AGENTSTATE_AGENT=claude {sys.executable} {script}")
    sidecar(interval=0.3).start()
    wait_for(lambda: tmux_server.option(pane, "@agentstate_agent_version") == "9.9.9",
             message="version published")
    env = dict(os.environ)
    env.pop("TMUX", None)
    out = subprocess.run([sys.executable, "-m", "tmux_agentstate", "list", "--json", "-L",
                          tmux_server.name], capture_output=True, text=True, env=env, timeout=60)
    row = json.loads(out.stdout.splitlines()[0])
    assert (row["agent"], row["agent_version"], row["covered"]) == ("claude", "9.9.9", False)
    out = subprocess.run([sys.executable, "-m", "tmux_agentstate", "explain", "-L",
                          tmux_server.name, pane], capture_output=True, text=True, env=env,
                         timeout=60).stdout
    tested = ", ".join(Catalog().get("claude").tested)
    assert f"release: 9.9.9; the fixtures cover {tested}: a changed dialog may be missed" in out
