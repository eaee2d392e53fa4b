#!/usr/bin/env python3
"""Benchmark: how long an update leaves a pane without a current sidecar.

    .venv/bin/python scripts/bench_update.py [--runs 3]

The plugin as TPM has it (this checkout's files as a git repo in a temp folder, its venv built
there), a private tmux server with a pane replaying a blocked Claude Code capture. Measured:

- update: a new commit, plugin.tmux sourced again → a new sidecar (from the rebuilt venv)
  lists the pane as blocked in its status, and the segment shows the summary again;
- reinstall: `pip install --force-reinstall` of the package under the running sidecar → the
  sidecar has handed over to a new one that lists the pane.
"""
from __future__ import annotations

import argparse
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tmux_agentstate.core.fixtures import load_index  # noqa: E402
from tmux_agentstate.sidecar.runtime import Runtime  # noqa: E402

GIT_ENV = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b",
               GIT_COMMITTER_EMAIL="b@b")


def sh(*args, **kw) -> str:
    return subprocess.run([str(a) for a in args], check=True, capture_output=True, text=True,
                          **kw).stdout.strip()


def plugin_copy(base: Path) -> tuple[Path, Path]:
    folder = base / "tmux-agentstate"
    for name in filter(None, sh("git", "-C", ROOT, "ls-files", "-z").split("\0")):
        if (ROOT / name).is_file():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, folder / name)
    sh("git", "-C", folder, "init", "-q")
    sh("git", "-C", folder, "add", "-A")
    sh("git", "-C", folder, "commit", "-qm", "cloned", env=GIT_ENV)
    venv = folder / ".venv"
    sh(sys.executable, "-m", "venv", venv)
    sh(venv / "bin" / "python", "-m", "pip", "install", "-q", "--disable-pip-version-check", folder,
       cwd=base)
    (venv / ".agentstate-stamp").write_text(sh("git", "-C", folder, "rev-parse", "HEAD") + "\n")
    return folder, venv


def wait(fn, timeout=300.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = fn()
        if value:
            return value
        time.sleep(0.05)
    raise SystemExit("timed out")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-update-"))
    name = f"bench-update-{os.getpid()}"
    tmux = ["tmux", "-L", name]
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    try:
        t0 = time.monotonic()
        folder, venv = plugin_copy(base)
        print(f"plugin copy and venv built in {time.monotonic() - t0:.1f}s")
        fx = next(f for f in load_index() if f.agent == "claude" and f.state == "blocked")
        pane_cmd = (f"env AGENTSTATE_AGENT=claude sh -c "
                    + shlex.quote(f"stty -echo; sleep 0.3; cat {shlex.quote(str(fx.path))}; exec sleep 3600"))
        subprocess.run([*tmux, "-f", "/dev/null", "new-session", "-d", "-x", str(fx.cols), "-y",
                        str(fx.rows), pane_cmd], check=True, env=env)
        subprocess.run([*tmux, "set-option", "-g", "status-right", "#{agentstate}"], check=True)
        socket = sh(*tmux, "display-message", "-p", "#{socket_path}")
        pane = sh(*tmux, "list-panes", "-a", "-F", "#{pane_id}")
        rt = Runtime(socket)

        def watching(not_pid: int = 0) -> int:
            pid = rt.running_pid()
            st = rt.read_status() or {}
            if not pid or pid == not_pid or st.get("pid") != pid:
                return 0
            ok = any(p["pane"] == pane and p["state"] == "blocked" for p in st.get("panes", []))
            return pid if ok else 0

        def summary() -> str:
            return sh(*tmux, "show-options", "-gqv", "@agentstate_summary")

        subprocess.run([*tmux, "run-shell", str(folder / "plugin.tmux")], check=True)
        pid = wait(watching)
        updates, handovers = [], []
        for n in range(args.runs):
            init = folder / "tmux_agentstate" / "__init__.py"
            init.write_text(init.read_text() + f"# update {n}\n")
            sh("git", "-C", folder, "commit", "-qam", f"update {n}", env=GIT_ENV)
            t0 = time.monotonic()
            subprocess.run([*tmux, "run-shell", str(folder / "plugin.tmux")], check=True)
            pid = wait(lambda: watching(pid))
            watched = time.monotonic() - t0
            wait(lambda: " !1 " in summary())
            updates.append((watched, time.monotonic() - t0))
            init.write_text(init.read_text() + f"# reinstall {n}\n")
            sh(venv / "bin" / "python", "-m", "pip", "install", "-q", "--no-deps",
               "--force-reinstall", "--disable-pip-version-check", folder, cwd=base)
            t0 = time.monotonic()  # from the end of pip's reinstall
            pid = wait(lambda: watching(pid))
            handovers.append(time.monotonic() - t0)
        for label, values in (("update: re-source → new sidecar watches the pane",
                               [u[0] for u in updates]),
                              ("update: re-source → summary back in the segment",
                               [u[1] for u in updates]),
                              ("reinstall: pip done → new sidecar watches the pane", handovers)):
            print(f"{label}: median {statistics.median(values):.1f}s "
                  f"(min {min(values):.1f}, max {max(values):.1f}, n={len(values)})")
    finally:
        pid = Runtime(sh(*tmux, "display-message", "-p", "#{socket_path}")).running_pid() \
            if subprocess.run([*tmux, "has-session"], capture_output=True).returncode == 0 else None
        subprocess.run([*tmux, "kill-server"], capture_output=True)
        if pid and pid > 0:
            time.sleep(1)
            try:
                os.kill(pid, 15)
            except OSError:
                pass
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
