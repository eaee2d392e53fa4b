#!/usr/bin/env python3
"""One view of every host, for real: what `list`, `list --json`, `hosts` and the popup show
with a local agent, an agent inside an ssh pane and two remote tmux servers together.

    .venv/bin/python scripts/one_view.py

A real sshd on 127.0.0.1 (keys made here, tests/sshd.py); everything drawn is a real agent's
captured byte stream (fixtures/):
- local pane: Claude Code, idle, on this tmux server;
- ssh pane: `ssh jump` from a local pane, then, on the far side, Codex's byte stream waiting on
  a command approval (nothing of ours there: the local sidecar infers Codex from the screen);
- host `box`: its own tmux server with Claude Code waiting on a permission dialog, under its
  own sidecar (started by `stream`);
- host `gpu`: its own tmux server with Gemini CLI idle.
The local sidecar links to box and gpu (`@agentstate-hosts 'box gpu'`).
"""
from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from sshd import REMOTE_COMMAND, RemoteTmux, Sshd  # noqa: E402
from tmux_agentstate.core.catalog import Catalog  # noqa: E402
from tmux_agentstate.core.fixtures import load_index  # noqa: E402
from tmux_agentstate.core.infer import present  # noqa: E402
from tmux_agentstate.core.screen import replay as replay_bytes  # noqa: E402

FIXTURES = load_index()


def fixture(agent: str, state: str, **kw):
    return next(f for f in FIXTURES if f.agent == agent and f.state == state and f.rows <= 40
                and f.cols <= 120 and all(getattr(f, k) == v for k, v in kw.items()))


def named_by_its_screen(agent: str, state: str):
    """A capture whose screen alone names its agent (what an ssh pane gives us: no process)."""
    manifests = list(Catalog().by_name.values())
    # a tool's approval first (the dialog people wait on most), else any
    for f in sorted(FIXTURES, key=lambda f: "approval" not in f.kind):
        if f.agent == agent and f.state == state and f.rows <= 40 and f.cols <= 120:
            found = present(manifests, replay_bytes(f.path.read_bytes(), f.rows, f.cols).view())
            if found is not None and found.name == agent:
                return f
    raise LookupError(f"no {agent} {state} capture names its agent")


def replay(path, agent: str) -> str:
    return (f"env AGENTSTATE_AGENT={agent} sh -c "
            + shlex.quote(f"stty -echo; sleep 0.3; cat {shlex.quote(str(path))}; exec sleep 3600"))


def main() -> int:
    base = Path(tempfile.mkdtemp(prefix="one-view-"))
    sshd = Sshd(base / "sshd")
    box, gpu = RemoteTmux(base / "box"), RemoteTmux(base / "gpu")
    local = "one-view"
    env = {k: v for k, v in __import__("os").environ.items() if k != "TMUX"}
    env["XDG_RUNTIME_DIR"] = str(base / "xdg")
    (base / "xdg").mkdir(mode=0o700)

    def tmux(*args) -> str:
        return subprocess.run(["tmux", "-L", local, *args], env=env, capture_output=True,
                              text=True).stdout.strip()

    def cli(*args) -> str:
        return subprocess.run([sys.executable, "-m", "tmux_agentstate", *args, "-L", local],
                              env=env, capture_output=True, text=True).stdout.rstrip()

    try:
        claude_blocked = fixture("claude", "blocked", renderer="classic")
        claude_idle = fixture("claude", "idle", renderer="classic")
        codex_blocked = named_by_its_screen("codex", "blocked")
        gemini_idle = fixture("gemini", "idle")
        for host, fx, agent in ((box, claude_blocked, "claude"), (gpu, gemini_idle, "gemini")):
            host.cmd("new-session", "-d", "-s", "work", "-x", str(fx.cols), "-y", str(fx.rows),
                     replay(fx.path, agent))
        sshd.host("box", tmpdir=box.tmpdir)
        sshd.host("gpu", tmpdir=gpu.tmpdir)
        sshd.host("jump")  # a login with no tmux of ours: the ssh pane's far side
        subprocess.run(["tmux", "-L", local, "-f", "/dev/null", "new-session", "-d", "-s", "laptop",
                        "-x", str(claude_idle.cols), "-y", str(claude_idle.rows),
                        replay(claude_idle.path, "claude")], env=env, check=True)
        tmux("set", "-g", "default-command", "exec bash --norc --noprofile")
        ssh_pane = tmux("new-session", "-d", "-s", "remote-shell", "-x", str(codex_blocked.cols),
                        "-y", str(codex_blocked.rows), "-P", "-F", "#{pane_id}",
                        f"{sshd.ssh} jump")
        time.sleep(1.5)  # the login's shell prompt
        tmux("send-keys", "-t", ssh_pane, f"stty -echo; clear; cat {codex_blocked.path}; sleep 3600",
             "Enter")
        tmux("set", "-g", "@agentstate-ssh", sshd.ssh)
        tmux("set", "-g", "@agentstate-remote-command", REMOTE_COMMAND)
        tmux("set", "-g", "@agentstate-hosts", "box gpu")
        subprocess.run([sys.executable, "-m", "tmux_agentstate", "start", "-L", local], env=env,
                       check=True, capture_output=True)
        deadline = time.monotonic() + 90
        rows: list[dict] = []
        while time.monotonic() < deadline:
            rows = [json.loads(line) for line in cli("list", "--json").splitlines() if line]
            if len(rows) == 4 and {r["host"] for r in rows} == {"", "box", "gpu"} \
                    and any(r.get("via") == "ssh" for r in rows) \
                    and any(r["host"] == "box" and r["state"] == "blocked" for r in rows):
                break
            time.sleep(0.5)
        else:
            print("not every row arrived:", rows)
        print("$ tmux-agentstate list --json")
        print(cli("list", "--json"))
        print("\n$ tmux-agentstate list")
        print(cli("list"))
        print("\n$ tmux-agentstate hosts")
        print(cli("hosts"))
        print("\n$ tmux show -gv @agentstate_summary")
        print(tmux("show", "-gv", "@agentstate_summary"))
        popup = tmux("new-window", "-t", "laptop", "-P", "-F", "#{pane_id}",
                     f"{sys.executable} -m tmux_agentstate popup -L {local}")
        time.sleep(2)
        print("\n$ prefix + A (the popup, as text)")
        print(tmux("capture-pane", "-p", "-t", popup).rstrip())
        tmux("send-keys", "-t", popup, "q")
        return 0
    finally:
        subprocess.run([sys.executable, "-m", "tmux_agentstate", "stop", "-L", local], env=env,
                       capture_output=True)
        subprocess.run(["tmux", "-L", local, "kill-server"], capture_output=True)
        for host in (box, gpu):
            host.agentstate("stop")
            subprocess.run(["tmux", "kill-server"], env=host.env, capture_output=True)
        sshd.stop()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
