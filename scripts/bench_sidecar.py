#!/usr/bin/env python3
"""Sidecar benchmarks on a private tmux server (never the user's). Not a test: prints figures.

    .venv/bin/python scripts/bench_sidecar.py cost [--scenarios idle:200,busy:50] [--runs 3]
    .venv/bin/python scripts/bench_sidecar.py floor [--panes 50] [--runs 3]
    .venv/bin/python scripts/bench_sidecar.py stages [--panes 50] [--seconds 45]
    .venv/bin/python scripts/bench_sidecar.py load [--panes 1,10,50] [--seconds 60]
    .venv/bin/python scripts/bench_sidecar.py flood [--mb 50]
    .venv/bin/python scripts/bench_sidecar.py accuracy [--minutes 5] [--agents 6]

load      N agent panes replay real captures at ~0.75 KB/s (bursts to 10 KB/s); the sidecar's
          CPU (own + its tmux clients, the control-mode one included) and RSS with each intake
          (pipe: pipe-pane bytes say when to read tmux's rendering; emulate: the bytes parsed
          by our screen; capture: tmux's rendering read every 0.3 s), then the same panes
          watched by (a) a naive poller, one `capture-pane` per pane per interval, and (b) one
          batched `capture-pane -e` of all panes per interval, each classifying what it
          captured. Same load, one run.
cost      what the sidecar adds to tmux's own CPU, idle and busy panes, both intakes
          (bench_cost.py; the figures in docs/figures.md come from it)
floor     busy panes piped into `cat > /dev/null`, no sidecar: what streaming costs alone
stages    busy panes watched by a sidecar whose stages are clocked (thread CPU time): where
          its CPU goes (bench_stages.py)
flood     one agent pane prints MB of text; another draws a permission prompt: time until
          @agentstate=blocked, and the sidecar's peak RSS.
accuracy  fake Claude-like agents on autopilot write their true state to side files; the
          option is sampled every --sample s (10 ms) through one control client of the
          bench's own: latency (prompt drawn → blocked), linger (answered → not blocked),
          false alarms. A latency is late by up to one sample (it was 50 ms, and a `tmux`
          process per sample: ~30 ms on the median).
"""
from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402

from tmux_agentstate.core.catalog import Catalog  # noqa: E402
from tmux_agentstate.sidecar.config import INTAKES  # noqa: E402
from tmux_agentstate.core.fixtures import load_index  # noqa: E402
from tmux_agentstate.core.screen import PaneScreen  # noqa: E402
from tmux_agentstate.tmux import Tmux  # noqa: E402
from tmux_agentstate.tmux.control import ControlClient  # noqa: E402

PY = sys.executable


class Bench:
    def __init__(self, name: str):
        self.name = f"agentstate-bench-{name}-{os.getpid()}"
        self.tmp = Path(tempfile.mkdtemp(prefix="agentstate-bench-"))
        self.env = dict(os.environ, XDG_RUNTIME_DIR=str(self.tmp))
        self.env.pop("TMUX", None)
        self.tmux("-f", "/dev/null", "new-session", "-d", "-s", "bench", "-x", "120", "-y", "32")
        self.adapter = Tmux(socket_name=self.name)
        self.socket_path = self.adapter.socket()
        self.server_pid = int(self.tmux("display-message", "-p", "#{pid}"))
        self.procs: list[subprocess.Popen] = []

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.name, *args], capture_output=True, text=True,
                              check=True).stdout.strip()

    def pane(self, command: str, rows=32, cols=120) -> str:
        return self.tmux("new-session", "-d", "-x", str(cols), "-y", str(rows), "-P", "-F",
                         "#{pane_id}", command)

    def spawn(self, *args: str) -> subprocess.Popen:
        p = subprocess.Popen([PY, *args], env=self.env, cwd=ROOT, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        self.procs.append(p)
        return p

    def sidecar(self, interval=0.7, intake="pipe") -> subprocess.Popen:
        return self.spawn("-m", "tmux_agentstate", "watch", "-L", self.name,
                          "--interval", str(interval), "--intake", intake)

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
        subprocess.run(["tmux", "-L", self.name, "kill-server"], capture_output=True)
        Path(self.socket_path).unlink(missing_ok=True)  # tmux 3.3a leaves it behind


def cpu_seconds(pid: int) -> float:
    """The process's CPU seconds, with its reaped children (the tmux clients it ran)."""
    t = psutil.Process(pid).cpu_times()
    return t.user + t.system + t.children_user + t.children_system


def live_children(pid: int) -> dict[int, float]:
    """CPU seconds of children still running (the sidecar's control-mode tmux client)."""
    out = {}
    for c in psutil.Process(pid).children(recursive=True):
        try:
            t = c.cpu_times()
            out[c.pid] = t.user + t.system
        except psutil.Error:
            pass
    return out


def measure(pid: int, seconds: float, server_pid: int) -> dict:
    p, srv = psutil.Process(pid), psutil.Process(server_pid)
    c0, s0, k0, t0 = cpu_seconds(pid), sum(srv.cpu_times()[:2]), live_children(pid), time.monotonic()
    rss = []
    while time.monotonic() - t0 < seconds:
        time.sleep(1)
        rss.append(p.memory_info().rss)
    dt = time.monotonic() - t0
    k1 = live_children(pid)
    kids = sum(v - k0.get(k, 0.0) for k, v in k1.items())
    return {"cpu": 100 * (cpu_seconds(pid) - c0 + kids) / dt, "rss": max(rss) / 2**20,
            "tmux": 100 * (sum(srv.cpu_times()[:2]) - s0) / dt}


# -- pollers to compare against (run as their own process so their CPU is counted alike) -----
def poller(socket: str, mode: str, interval: float) -> None:
    tmux = Tmux(socket_name=socket)
    catalog = Catalog()
    while True:
        t0 = time.monotonic()
        panes, _ = tmux.panes_and_clients()
        agents = [p for p in panes if p.pane_id != "%0"]
        if mode == "naive":
            captured = {}
            for p in agents:
                captured.update(tmux.capture_one(p.pane_id))
        else:
            captured = tmux.capture([p.pane_id for p in agents])
        m = catalog.get("claude")
        for p in agents:
            screen = PaneScreen(p.height, p.width)
            screen.feed_text("\x1b[H" + captured.get(p.pane_id, "").replace("\n", "\r\n"))
            m.evaluate(screen.view())
        time.sleep(max(0.0, interval - (time.monotonic() - t0)))


def cmd_load(args) -> None:
    fixtures = [f for f in load_index() if f.path.stat().st_size > 20_000]
    print(f"{'panes':>5}  {'watcher':<26} {'CPU % of a core':>15} {'RSS MB':>7} {'tmux server CPU %':>18}")
    for n in [int(x) for x in args.panes.split(",")]:
        b = Bench(f"load{n}")
        try:
            for i in range(n):
                fx = fixtures[i % len(fixtures)]
                cmd = (f"env AGENTSTATE_AGENT={fx.agent} {shlex.quote(PY)} -m tmux_agentstate.demo.replay "
                       f"--rate {args.rate} --loop --seed {i} {shlex.quote(str(fx.path))}")
                b.pane(cmd, fx.rows, fx.cols)
            time.sleep(2)
            rows = []
            watchers = args.watchers.split(",")
            for intake in [w for w in INTAKES if w in watchers]:
                sc = b.sidecar(args.interval, intake)
                time.sleep(5)  # let it adopt and seed every pane
                rows.append((f"sidecar ({intake} intake)", measure(sc.pid, args.seconds, b.server_pid)))
                sc.terminate()
                sc.wait()
            for mode in [w for w in ("naive", "batched") if w in watchers]:
                p = b.spawn(__file__, "_poller", b.name, mode, str(args.interval))
                time.sleep(3)
                rows.append((f"{mode} capture-pane poller", measure(p.pid, args.seconds, b.server_pid)))
                p.terminate()
                p.wait()
            base = rows[0][1]["cpu"] or 1e-9
            for label, r in rows:
                ratio = f"  ({r['cpu'] / base:.1f}x)" if label != rows[0][0] else ""
                print(f"{n:>5}  {label:<26} {r['cpu']:>15.2f} {r['rss']:>7.1f} {r['tmux']:>18.2f}{ratio}")
        finally:
            b.close()


def cmd_flood(args) -> None:
    b = Bench("flood")
    try:
        big = b.tmp / "big.txt"
        line = b"flood " * 20 + b"\n"
        with open(big, "wb") as f:
            for _ in range(args.mb * 2**20 // len(line)):
                f.write(line)
        blocked = next(f for f in load_index() if f.state == "blocked" and f.agent == "claude")
        go = b.tmp / "go"
        prompt_pane = b.pane(
            f"env AGENTSTATE_AGENT=claude sh -c 'while [ ! -e {go} ]; do sleep 0.01; done; "
            f"cat {shlex.quote(str(blocked.path))}; exec sleep 600'", blocked.rows, blocked.cols)
        flood_pane = b.pane(f"env AGENTSTATE_AGENT=claude sh -c 'sleep 3; cat {big}; exec sleep 600'")
        sc = b.sidecar(intake=args.intake)
        proc, server = psutil.Process(sc.pid), psutil.Process(b.server_pid)
        server_peak = 0
        time.sleep(4.0)  # the flood is on
        go.touch()
        t0 = time.monotonic()
        peak = 0
        latency = None
        while time.monotonic() - t0 < 20:
            peak = max(peak, proc.memory_info().rss)
            if b.tmux("display-message", "-p", "-t", prompt_pane, "#{@agentstate}") == "blocked":
                latency = time.monotonic() - t0
                break
            time.sleep(0.01)
        done = False
        t1 = time.monotonic()
        while time.monotonic() - t1 < 120:
            peak = max(peak, proc.memory_info().rss)
            server_peak = max(server_peak, server.memory_info().rss)
            if "sleep" in b.tmux("display-message", "-p", "-t", flood_pane, "#{pane_current_command}"):
                done = True
                break
            time.sleep(0.2)
        print(f"flood: {args.mb} MB through one agent pane ({'finished' if done else 'still running'}"
              f" after {time.monotonic() - t1 + 4:.1f} s)")
        print(f"prompt in another pane → @agentstate=blocked: "
              f"{'%.3f s' % latency if latency is not None else 'NOT within 20 s'} "
              f"(includes the prompt pane's own sh start and cat, and this 10 ms poll)")
        print(f"sidecar peak RSS during the flood: {peak / 2**20:.1f} MB; "
              f"tmux server peak RSS: {server_peak / 2**20:.1f} MB ({args.intake} intake)")
    finally:
        b.close()


def cmd_accuracy(args) -> None:
    b = Bench("accuracy")
    try:
        truths = []
        panes = []
        for i in range(args.agents):
            truth = b.tmp / f"truth-{i}.log"
            truths.append(truth)
            panes.append(b.pane(
                f"env AGENTSTATE_AGENT=claude AGENTSTATE_TRUTH_FILE={truth} {shlex.quote(PY)} -m "
                f"tmux_agentstate.demo.fake_agent --autopilot --seed {i + 7}"))
        sc = b.sidecar(args.interval, args.intake)
        t_end = time.time() + args.minutes * 60
        samples: dict[str, list[tuple[float, str]]] = {p: [] for p in panes}
        c0 = cpu_seconds(sc.pid)
        t0 = time.monotonic()
        fmt = "#{pane_id} #{@agentstate}"
        sampler = ControlClient(["tmux", "-L", b.name])  # a sample without starting a process
        sampler.connect("bench")
        try:
            while time.time() < t_end:
                asked = time.time()
                (ok, out), = sampler.run([["list-panes", "-a", "-F", fmt]])
                now = (asked + time.time()) / 2  # tmux read the options between the two
                for line in out.splitlines() if ok else ():
                    pid, _, state = line.partition(" ")
                    if pid in samples:
                        samples[pid].append((now, state))
                time.sleep(max(0.0, args.sample - (time.time() - asked)))
        finally:
            sampler.close()
        cpu = 100 * (cpu_seconds(sc.pid) - c0) / (time.monotonic() - t0)
        report_accuracy(panes, truths, samples, cpu, args)
    finally:
        b.close()


def read_truth(path: Path) -> list[tuple[float, str]]:
    out = []
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) >= 2:
            out.append((float(parts[0]), parts[1]))
    return out


def state_at(timeline: list[tuple[float, str]], t: float) -> str:
    cur = ""
    for at, s in timeline:
        if at > t:
            break
        cur = s
    return cur


def report_accuracy(panes, truths, samples, cpu, args) -> None:
    latencies, lingers, prompts, missed = [], [], 0, 0
    false_eps = {"working": 0, "idle": 0}
    false_secs = {"working": 0.0, "idle": 0.0}
    agree = total = 0
    for pane, truth_file in zip(panes, truths):
        truth = read_truth(truth_file)
        seen = samples[pane]
        if not truth or not seen:
            continue
        for (at, s), nxt in zip(truth, truth[1:] + [(seen[-1][0], "")]):
            if s != "blocked" or nxt[0] > seen[-1][0]:
                continue
            prompts += 1
            hit = next((t for t, v in seen if at <= t <= nxt[0] and v == "blocked"), None)
            if hit is None:
                missed += 1
            else:
                latencies.append(hit - at)
            gone = next((t for t, v in seen if t >= nxt[0] and v != "blocked"), None)
            if gone is not None and hit is not None:
                lingers.append(gone - nxt[0])
        prev_false = False
        for i, (t, v) in enumerate(seen):
            real = state_at(truth, t)
            if not real:
                continue
            total += 1
            agree += v == real
            false = v == "blocked" and real != "blocked"
            # allow one sweep of linger after a real prompt before calling it a false alarm
            if false and state_at(truth, t - args.interval) == "blocked":
                false = False
            if false:
                dt = t - seen[i - 1][0] if i else args.sample
                false_secs[real] += dt
                if not prev_false:
                    false_eps[real] += 1
            prev_false = false
    q = lambda xs, p: sorted(xs)[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")  # noqa: E731
    print(f"{len(panes)} fake agents, {args.minutes} min, sweep {args.interval}s, {args.intake} intake;"
          f" {prompts} prompts")
    print(f"latency prompt drawn → blocked: median {q(latencies, .5):.3f} s, p95 {q(latencies, .95):.3f} s,"
          f" max {max(latencies, default=float('nan')):.3f} s; missed {missed}")
    print(f"linger after answer: median {q(lingers, .5):.3f} s, max {max(lingers, default=float('nan')):.3f} s")
    print(f"false 'blocked': while working {false_eps['working']} episodes / {false_secs['working']:.1f} s,"
          f" while idle {false_eps['idle']} / {false_secs['idle']:.1f} s")
    print(f"samples agreeing with the truth: {100 * agree / max(total, 1):.1f}% of {total}"
          f" (a sample lags any change by up to one classification)")
    print(f"sidecar CPU: {cpu:.2f}% of a core")


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "_poller":
        poller(sys.argv[2], sys.argv[3], float(sys.argv[4]))
        return 0
    if len(sys.argv) > 1 and sys.argv[1] == "_stages":  # the sidecar `stages` runs
        from bench_stages import run_clocked
        run_clocked(sys.argv[2], sys.argv[3:])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    lo = sub.add_parser("load")
    lo.add_argument("--panes", default="1,10,50")
    lo.add_argument("--seconds", type=float, default=60)
    lo.add_argument("--rate", type=int, default=750)
    lo.add_argument("--interval", type=float, default=0.7)
    lo.add_argument("--watchers", default="pipe,emulate,capture,naive,batched",
                    help="which of pipe,emulate,capture,naive,batched to measure")
    fl = sub.add_parser("flood")
    fl.add_argument("--mb", type=int, default=50)
    fl.add_argument("--intake", choices=INTAKES, default="pipe")
    ac = sub.add_parser("accuracy")
    ac.add_argument("--minutes", type=float, default=5)
    ac.add_argument("--agents", type=int, default=6)
    ac.add_argument("--interval", type=float, default=0.7)
    ac.add_argument("--intake", choices=INTAKES, default="pipe")
    ac.add_argument("--sample", type=float, default=0.01, help="seconds between samples")
    co = sub.add_parser("cost", help="what the sidecar adds to tmux's own CPU (bench_cost.py)")
    co.add_argument("--scenarios", default="idle:200,busy:50",
                    help="comma-separated idle:N (agents waiting), busy:N (replaying) and "
                         "agents:N (fake agents on autopilot)")
    co.add_argument("--intakes", default="emulate,pipe")
    co.add_argument("--runs", type=int, default=3)
    co.add_argument("--seconds", type=float, default=30)
    co.add_argument("--interval", type=float, default=0.7)
    fo = sub.add_parser("floor", help="what streaming busy panes' bytes costs tmux alone")
    fo.add_argument("--panes", type=int, default=50)
    fo.add_argument("--runs", type=int, default=3)
    fo.add_argument("--seconds", type=float, default=30)
    st = sub.add_parser("stages", help="where the sidecar's CPU goes (bench_stages.py)")
    st.add_argument("--panes", type=int, default=50)
    st.add_argument("--seconds", type=float, default=45)
    st.add_argument("--warmup", type=float, default=15)
    st.add_argument("--interval", type=float, default=0.7)
    args = ap.parse_args()
    if args.cmd == "stages":
        from bench_stages import cmd_stages
        cmd_stages(args, Bench, PY, __file__)
        return 0
    if args.cmd == "floor":
        from bench_cost import cmd_floor
        cmd_floor(args, Bench, PY)
        return 0
    if args.cmd == "cost":
        from bench_cost import cmd_cost
        cmd_cost(args, Bench, PY)
        return 0
    {"load": cmd_load, "flood": cmd_flood, "accuracy": cmd_accuracy}[args.cmd](args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
