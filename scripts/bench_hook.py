#!/usr/bin/env python3
"""What our agent hooks cost and what they buy.

    .venv/bin/python scripts/bench_hook.py hook [--runs 50]
        wall time of one hook run, `python -m tmux_agentstate.hook claude PreToolUse` with a
        small JSON payload on stdin, recording onto a real pane of a private tmux server
        (this is what the agent waits for before going on: Claude runs PreToolUse and
        PermissionRequest hooks before it draws a permission prompt)

    .venv/bin/python scripts/bench_hook.py prompt [--runs 5] [--interval 0.7]
        the REAL Claude Code (harness/claude.py's install) against the mock, in a private tmux
        server with the sidecar: from Enter on a prompt whose reply asks for a Bash command, the
        time until tmux shows the permission dialog and until `@agentstate` is `blocked`;
        launched through `tmux-agentstate launch claude` (hooks) and as plain `claude` with
        AGENTSTATE_AGENT unset (identity by process, screen only), side by side.

    .venv/bin/python scripts/bench_hook.py plugin [--runs 50]
        the JS plugin `launch opencode|kilo` loads (hooks/opencode_plugin/agentstate.js), under
        node as the CLIs load it, onto a real pane of a private tmux server: the time its event
        hook takes in the host (what the agent's own loop pays) and from the event to
        `@agentstate_report` on the pane, alternating permission.asked / permission.replied
"""
from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

PAYLOAD = json.dumps({"session_id": "bench", "hook_event_name": "PreToolUse", "tool_name": "Bash",
                      "tool_input": {"command": "ls -la", "description": "List files"},
                      "cwd": "/tmp", "permission_mode": "default"})


def _ms(values: list[float]) -> str:
    v = sorted(values)
    p90 = v[min(len(v) - 1, int(round(0.9 * (len(v) - 1))))]
    return (f"median {statistics.median(v) * 1000:6.1f} ms  min {v[0] * 1000:6.1f}  "
            f"p90 {p90 * 1000:6.1f}  max {v[-1] * 1000:6.1f}  (n={len(v)})")


def _timed(argv: list[str], env: dict, stdin: str = "") -> float:
    t = time.perf_counter()
    subprocess.run(argv, input=stdin, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   text=True, check=False)
    return time.perf_counter() - t


def bench_hook(runs: int) -> int:
    from conftest import TmuxServer
    srv = TmuxServer(f"agentstate-bench-hook-{os.getpid()}")
    try:
        pane = srv.new_pane("sleep 600")
        # as `launch` leaves it (core/origin.py): its token on the pane, this process standing
        # in for the launched agent (the hook's parent), so the hook takes the path a real one does
        token = secrets.token_hex(16)
        srv.cmd("set-option", "-p", "-t", pane, "@agentstate_launch", f"{token} {os.getpid()}")
        env = dict(os.environ, TMUX=f"{srv.tmux.socket()},1,0", TMUX_PANE=pane,
                   AGENTSTATE_TOKEN=token, AGENTSTATE_LAUNCH_PID=str(os.getpid()))
        hook = [sys.executable, "-m", "tmux_agentstate.hook", "claude", "PreToolUse"]
        for _ in range(3):  # warm the page cache
            _timed(hook, env, PAYLOAD)
        times = [_timed(hook, env, PAYLOAD) for _ in range(runs)]
        report = srv.option(pane, "@agentstate_report")
        assert report.startswith("working ") and "hook:claude:PreToolUse" in report.split(), report
        bare = [_timed([sys.executable, "-c", "pass"], env) for _ in range(runs)]
        nosite = [_timed([sys.executable, "-S", "-c", "pass"], env) for _ in range(runs)]
        tmux = [_timed(["tmux", "set-option", "-p", "-t", pane, "@x", "1"], env) for _ in range(runs)]
        print(f"hook (python -m tmux_agentstate.hook claude PreToolUse): {_ms(times)}")
        print(f"  for scale: {sys.executable} -c pass:    {_ms(bare)}")
        print(f"             {sys.executable} -S -c pass: {_ms(nosite)}")
        print(f"             tmux set-option alone:       {_ms(tmux)}")
        print(f"  last report on the pane: {report!r}")
    finally:
        srv.kill()
    return 0


# -- the opencode / Kilo plugin ------------------------------------------------------------------
PLUGIN_DRIVER = r"""
import { createInterface } from "node:readline"
const hooks = await (await import(process.argv[2])).default({}, undefined)
for await (const line of createInterface({ input: process.stdin })) {
  const type = line.trim()
  const t = performance.now()
  await hooks.event({ event: { type, properties: { sessionID: "ses_bench", permission: "bash" } } })
  console.log((performance.now() - t).toFixed(3))
}
"""


def bench_plugin(runs: int) -> int:
    import shutil
    import tempfile

    from conftest import TmuxServer
    from tmux_agentstate.hooks.launch import HOOK_PYTHON_ENV, OPENCODE_PLUGIN
    node = shutil.which("node")
    if node is None:
        print("node is not installed", file=sys.stderr)
        return 2
    base = Path(tempfile.mkdtemp(prefix="agentstate-bench-plugin-"))
    (base / "driver.mjs").write_text(PLUGIN_DRIVER)
    srv = TmuxServer(f"agentstate-bench-plugin-{os.getpid()}")
    try:
        pane = srv.new_pane("sleep 600")
        env = dict(os.environ, TMUX=f"{srv.tmux.socket()},1,0", TMUX_PANE=pane,
                   AGENTSTATE_AGENT="kilo", **{HOOK_PYTHON_ENV: sys.executable})
        proc = subprocess.Popen([node, str(base / "driver.mjs"), OPENCODE_PLUGIN.as_uri()],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        in_host, to_pane = [], []
        for i in range(runs + 3):  # the first three warm the page cache
            event, want = (("permission.asked", "blocked") if i % 2 == 0
                           else ("permission.replied", "working"))
            t = time.perf_counter()
            proc.stdin.write(event + "\n")
            proc.stdin.flush()
            spent = float(proc.stdout.readline()) / 1000
            while not srv.option(pane, "@agentstate_report").startswith(want + " "):
                if time.perf_counter() - t > 10:
                    raise SystemExit(f"{event}: never recorded")
                time.sleep(0.002)
            if i >= 3:
                in_host.append(spent)
                to_pane.append(time.perf_counter() - t)
        proc.stdin.close()
        proc.wait(10)
        print(f"plugin {OPENCODE_PLUGIN.name} under node {subprocess.run([node, '--version'], capture_output=True, text=True).stdout.strip()}, "
              f"{runs} events (permission.asked / permission.replied in turn)")
        print(f"  in the host's event hook:    {_ms(in_host)}")
        print(f"  event → @agentstate_report:  {_ms(to_pane)}  (a python start, tmux set-option)")
    finally:
        srv.kill()
        shutil.rmtree(base, ignore_errors=True)
    return 0


# -- prompt latency -----------------------------------------------------------------------------
def _one_mode(mode: str, runs: int, interval: float, mock, base: Path) -> list[dict]:
    import shutil

    from conftest import SidecarProcess, TmuxServer
    from test_real_agents import AgentPane, claude_env, hclaude, hcodex, launch_argv

    work = base / mode
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    env, proj = claude_env(work, mock)
    srv = TmuxServer(f"agentstate-bench-prompt-{mode}-{os.getpid()}")
    run = work / "run"
    run.mkdir(mode=0o700)
    sc = SidecarProcess(srv, run, interval).start()
    if mode == "launch":
        argv = launch_argv("claude", "--permission-mode", "manual")
    else:  # plain claude: no hooks, no AGENTSTATE_AGENT (the server's env has none either)
        argv = [str(hclaude.BIN), "--permission-mode", "manual"]
    agent = AgentPane(srv, argv, env, proj)
    out = []
    try:
        agent.wait_text("❯", "? for shortcuts", timeout=60)
        time.sleep(1.5)
        for i in range(runs):
            agent.type(f"make the output folder number {i} RUNCMD mkdir -p out{i} && touch out{i}/x")
            t0 = time.time()
            agent.keys("Enter")
            drawn = blocked = None
            while time.time() - t0 < 30 and (drawn is None or blocked is None):
                res = subprocess.run(
                    ["tmux", "-L", srv.name, "capture-pane", "-p", "-t", agent.pane, ";",
                     "display-message", "-p", "-t", agent.pane, "#{@agentstate}"],
                    capture_output=True, text=True)
                now = time.time()
                lines = res.stdout.rstrip("\n").rsplit("\n", 1)
                state = lines[-1].strip() if len(lines) > 1 else ""
                if drawn is None and "Do you want to proceed?" in res.stdout:
                    drawn = now
                if blocked is None and state == "blocked":
                    blocked = now
                time.sleep(0.005)
            src = srv.option(agent.pane, "@agentstate_source")
            out.append({"drawn": (drawn or now) - t0, "blocked": (blocked or now) - t0,
                        "gap": (blocked or now) - (drawn or now), "source": src,
                        "ok": drawn is not None and blocked is not None})
            time.sleep(0.5)
            agent.keys("Escape")
            agent.wait_text("? for shortcuts", timeout=30)
            deadline = time.time() + 10
            while srv.state(agent.pane) != "idle" and time.time() < deadline:
                time.sleep(0.05)
            time.sleep(0.8)
    finally:
        sc.kill()
        srv.kill()
        hcodex.kill_pids(hcodex.pids_naming(env["HOME"]))
    return out


def bench_prompt(runs: int, interval: float) -> int:
    import tempfile

    from test_real_agents import hclaude
    if not hclaude.BIN.exists():
        print(f"Claude Code is not installed in {hclaude.PREFIX}: run scripts/install-agents",
              file=sys.stderr)
        return 2
    base = Path(tempfile.mkdtemp(prefix="agentstate-bench-prompt-"))
    mock = hclaude.Mock(base / "mock.jsonl")
    results = {}
    try:
        for mode in ("launch", "plain"):
            results[mode] = _one_mode(mode, runs, interval, mock, base)
    finally:
        mock.close()
    print(f"Claude Code {hclaude.VERSION}, sidecar --interval {interval}, {runs} prompts each "
          f"(Enter → dialog on tmux's screen → @agentstate=blocked)")
    print(f"{'':8s} {'Enter→dialog':>14s} {'dialog→blocked':>16s} {'Enter→blocked':>15s}  sources")
    for mode, rows in results.items():
        ok = [r for r in rows if r["ok"]]
        if not ok:
            print(f"{mode:8s} no complete run")
            continue
        med = {k: statistics.median(r[k] for r in ok) * 1000 for k in ("drawn", "gap", "blocked")}
        print(f"{mode:8s} {med['drawn']:11.0f} ms {med['gap']:13.0f} ms {med['blocked']:12.0f} ms  "
              f"{','.join(sorted({r['source'] for r in ok}))}  (median of {len(ok)})")
        for r in rows:
            print(f"{'':8s} {r['drawn'] * 1000:11.0f} ms {r['gap'] * 1000:13.0f} ms "
                  f"{r['blocked'] * 1000:12.0f} ms  {r['source']}{'' if r['ok'] else ' (timed out)'}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    h = sub.add_parser("hook", help="wall time of one hook run")
    h.add_argument("--runs", type=int, default=50)
    p = sub.add_parser("prompt", help="real Claude: dialog drawn → blocked, launch vs plain")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--interval", type=float, default=0.7, help="sidecar sweep (default 0.7, the default)")
    g = sub.add_parser("plugin", help="the opencode/Kilo JS plugin: host cost, event → report")
    g.add_argument("--runs", type=int, default=50)
    a = ap.parse_args(argv)
    if a.cmd == "plugin":
        return bench_plugin(a.runs)
    return bench_hook(a.runs) if a.cmd == "hook" else bench_prompt(a.runs, a.interval)


if __name__ == "__main__":
    sys.exit(main())
