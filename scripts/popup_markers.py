#!/usr/bin/env python3
"""The `prefix + A` popup with its markers, from real agents: the real Claude Code (pinned, in
/work/agents; `scripts/install-agents`) against the offline mock in a private tmux server,
watched by the sidecar. One turn says how full its context is (the mock's CONTEXTUSED), the
next ends in a rate limit (RATELIMITED): the pane reads idle with `[rate-limit]`, its context
in use, and `done` (no client shows it). A second Claude pane waits on a permission prompt.
Prints the popup's screen as tmux has it (docs/popup-markers.txt).

    .venv/bin/python scripts/popup_markers.py [--out docs/popup-markers.txt]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("hclaude", ROOT / "harness" / "claude.py")
hclaude = importlib.util.module_from_spec(spec)
sys.modules["hclaude"] = hclaude
spec.loader.exec_module(hclaude)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "docs" / "popup-markers.txt"))
    args = ap.parse_args()
    if not hclaude.BIN.exists():
        print(f"Claude Code is not installed in {hclaude.PREFIX} (scripts/install-agents)", file=sys.stderr)
        return 1
    sock = f"agentstate-markers-{os.getpid()}"
    tmp = Path(tempfile.mkdtemp(prefix="agentstate-markers-", dir=str(hclaude.AGENTS)))
    T = ["tmux", "-L", sock]

    def tmux(*a: str) -> str:
        return subprocess.run([*T, *a], capture_output=True, text=True).stdout.rstrip("\n")

    mock = hclaude.Mock(tmp / "requests.jsonl")
    env_base = dict(os.environ, XDG_RUNTIME_DIR=str(tmp))
    env_base.pop("TMUX", None)
    sidecar = None
    try:
        tmux("-f", "/dev/null", "new-session", "-d", "-s", "main", "-x", "130", "-y", "30")
        panes = []
        for name in ("api", "ask"):
            home, proj = tmp / f"home-{name}", tmp / f"{name}-project"
            home.mkdir()
            proj.mkdir()
            (home / ".claude.json").write_text(json.dumps({
                "hasCompletedOnboarding": True, "theme": "dark",
                "customApiKeyResponses": {"approved": [hclaude.KEY[-20:]], "rejected": []},
                "projects": {str(proj): {"hasTrustDialogAccepted": True}}}))
            env = {"HOME": str(home), "PATH": f"{hclaude.BIN.parent}:/usr/bin:/bin",
                   "TERM": "xterm-256color", "LANG": "C.UTF-8",
                   "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{mock.port}",
                   "ANTHROPIC_API_KEY": hclaude.KEY, "DISABLE_AUTOUPDATER": "1",
                   "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "CLAUDE_CODE_MAX_RETRIES": "1"}
            cmd = ("exec env " + " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()) + " "
                   + shlex.join([str(hclaude.BIN), "--permission-mode", "manual",
                                 "--settings", '{"tui":"default"}']))
            panes.append(tmux("new-session", "-d", "-s", name, "-x", "110", "-y", "36", "-c",
                              str(proj), "-P", "-F", "#{pane_id}", cmd))
        sidecar = subprocess.Popen([sys.executable, "-m", "tmux_agentstate", "watch", "-L", sock],
                                   env=env_base, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def until(pred, timeout=60.0):
            end = time.monotonic() + timeout
            while time.monotonic() < end:
                if pred():
                    return True
                time.sleep(0.2)
            raise SystemExit(f"timed out; screens:\n" + "\n---\n".join(tmux("capture-pane", "-p", "-t", p) for p in panes))

        opt = lambda p, o: tmux("display-message", "-p", "-t", p, f"#{{{o}}}")  # noqa: E731
        for p in panes:
            until(lambda: "? for shortcuts" in tmux("capture-pane", "-p", "-t", p))
        time.sleep(1.0)

        def say(p, text):
            tmux("send-keys", "-t", p, "-l", text)
            time.sleep(0.5)
            tmux("send-keys", "-t", p, "Enter")

        api, ask = panes
        say(api, "how full is the context CONTEXTUSED 150000")
        until(lambda: opt(api, "@agentstate_context") == "75")
        say(ask, "set up the build RUNCMD mkdir -p build && touch build/out.txt")
        say(api, "and once more RATELIMITED")
        until(lambda: opt(api, "@agentstate_error") == "rate-limit" and opt(api, "@agentstate") == "idle"
              and opt(ask, "@agentstate") == "blocked", timeout=90)
        until(lambda: opt(api, "@agentstate_done") == "1")
        popup = tmux("new-session", "-d", "-s", "popup", "-x", "150", "-y", "8", "-P", "-F", "#{pane_id}",
                     f"{shlex.quote(sys.executable)} -m tmux_agentstate popup -L {sock}")
        until(lambda: "rate-limit" in tmux("capture-pane", "-p", "-t", popup))
        time.sleep(1.2)
        shot = tmux("capture-pane", "-p", "-t", popup)
        shot = "\n".join(line.rstrip() for line in shot.splitlines()).rstrip() + "\n"
        Path(args.out).write_text(shot)
        print(shot, end="")
        return 0
    finally:
        if sidecar is not None:
            sidecar.terminate()
            sidecar.wait(5)
        subprocess.run([*T, "kill-server"], capture_output=True)
        hclaude.common.kill_pids(hclaude.common.pids_naming(str(tmp)))
        mock.close()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
