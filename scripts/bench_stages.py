"""Where the sidecar's CPU goes, stage by stage: `bench_sidecar.py stages` (not a test: figures).

N busy panes (as `cost`'s busy:N) are watched by a sidecar run through `_stages`, which wraps
the functions of each stage of the data flow (intake → screen → manifest → publish, and the
loop that drives them) in a clock of the calling thread's CPU time, and writes what each took
when it stops. A sampling profiler (py-spy) counts a thread asleep in `time.sleep` as busy now
and then; a thread's own CPU clock cannot. Times are inclusive: a function called inside
another is counted in both (the sweep holds `_settle`, which holds classifications and
publishing). The clocks add ~1 µs a call.
"""
from __future__ import annotations

import functools
import importlib
import os
import signal
import sys
import time

import psutil

# (stage of the data flow, module, function); each function's time is all of its calls'
STAGES = [
    ("loop", "sidecar.loop", "Sidecar.sweep"),
    ("loop", "sidecar.pace", "listing_due"),      # in the sweep: /proc and tty looks
    ("loop", "sidecar.pace", "recheck"),
    ("loop", "sidecar.loop", "Sidecar._list_and_sweep"),
    ("loop", "sidecar.loop", "Sidecar._settle"),  # in the sweep: classify, publish
    ("loop", "sidecar.loop", "Sidecar._early"),   # after a wait: the pre-check of changed panes
    ("intake", "sidecar.intakes.emulate", "EmulateIntake.wait"),
    ("intake", "sidecar.fifos", "Fifos.wait"),
    ("intake", "sidecar.intakes.emulate", "EmulateIntake._on_readable"),
    ("intake", "sidecar.fifos", "Fifos.read"),
    ("intake", "sidecar.intakes.emulate", "EmulateIntake.seed"),
    ("screen", "core.screen", "PaneScreen.defer"),
    ("screen", "core.screen", "PaneScreen.feed"),
    ("screen", "core.screen", "PaneScreen._catch_up"),  # deferred bytes, at any read
    ("manifest", "sidecar.watch", "could_be_blocked"),
    ("manifest", "sidecar.loop", "Sidecar._classify"),  # in _settle and _early
    ("manifest", "sidecar.watch", "classify"),
    ("manifest", "core.manifest", "Manifest.evaluate"),
    ("publish", "sidecar.publish", "Publisher.pane"),
    ("publish", "sidecar.publish", "Publisher.aggregates"),
    ("publish", "sidecar.publish", "Publisher.status"),
    ("publish", "sidecar.publish", "Publisher.apply"),
]


def _clock(spent: dict, key: str, fn):
    @functools.wraps(fn)
    def clocked(*args, **kwargs):
        started = time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            entry = spent[key]
            entry[0] += 1
            entry[1] += time.thread_time() - started
    return clocked


def stage_function(module_name: str, qualname: str) -> tuple[object, str]:
    """Where a stage's function lives: (its class or module, its name there)."""
    module = importlib.import_module(f"tmux_agentstate.{module_name}")
    owner, _, name = qualname.rpartition(".")
    return (getattr(module, owner) if owner else module), name


def run_clocked(out: str, argv: list[str]) -> None:
    """`_stages OUT watch …`: the sidecar, each stage clocked; the table of calls and CPU
    seconds per stage written to OUT when it stops (SIGTERM), counted from SIGUSR2."""
    spent = {f"{m}:{f}": [0, 0.0] for _, m, f in STAGES}
    loop = importlib.import_module("tmux_agentstate.sidecar.loop")
    for _, module_name, qualname in STAGES:
        holder, name = stage_function(module_name, qualname)
        clocked = _clock(spent, f"{module_name}:{qualname}", getattr(holder, name))
        setattr(holder, name, clocked)
        if holder is not loop and getattr(loop, name, None) is not None and "." not in qualname:
            setattr(loop, name, clocked)  # a function the loop imported by name: there too
    started = [time.monotonic()]

    def restart(*_):  # SIGUSR2: the warm-up is over, count from now
        for entry in spent.values():
            entry[0], entry[1] = 0, 0.0
        started[0] = time.monotonic()

    def write(*_):
        wall = time.monotonic() - started[0]
        with open(out, "w") as f:
            f.write(f"{wall:.3f}\n")
            for key, (calls, seconds) in spent.items():
                f.write(f"{key} {calls} {seconds:.6f}\n")
        os._exit(0)

    signal.signal(signal.SIGTERM, write)
    signal.signal(signal.SIGUSR2, restart)
    from tmux_agentstate.cli import main
    sys.argv = ["tmux-agentstate", *argv]
    main()
    write()


def cmd_stages(args, bench_cls, python: str, script: str) -> None:
    from bench_cost import make_panes
    bench = bench_cls("stages")
    out = str(bench.tmp / "stages.txt")
    try:
        make_panes(bench, "busy", args.panes, python)
        bench.tmux("kill-session", "-t", "bench")
        time.sleep(5)  # the panes' own start
        sidecar = bench.spawn(script, "_stages", out, "watch", "-L", bench.name,
                              "--interval", str(args.interval), "--intake", "emulate")
        time.sleep(args.warmup)  # the cold start, seeds and hand-overs are not measured
        me = psutil.Process(sidecar.pid)
        me.send_signal(signal.SIGUSR2)
        cpu0 = me.cpu_times()
        time.sleep(args.seconds)
        cpu1 = me.cpu_times()
        sidecar.terminate()
        sidecar.wait(10)
    finally:
        bench.close()
    lines = open(out).read().split("\n")
    wall = float(lines[0])  # the clocks' window
    table = {k: (int(c), float(s)) for k, c, s in (ln.split() for ln in lines[1:] if ln)}
    user = cpu1.user - cpu0.user
    system = cpu1.system - cpu0.system
    print(f"{args.panes} busy panes, emulate; the sidecar's CPU over {args.seconds:.0f} s: "
          f"{100 * (user + system) / args.seconds:.2f} % of a core (user "
          f"{100 * user / args.seconds:.2f}, system {100 * system / args.seconds:.2f})")
    print("by function (its thread's CPU; inclusive: a call inside another counts in both):")
    print(f"  {'stage':<9}{'function':<40} {'calls/s':>8} {'% core':>7} {'µs/call':>8}")
    for stage, module_name, qualname in STAGES:
        calls, seconds = table[f"{module_name}:{qualname}"]
        print(f"  {stage:<9}{qualname:<40} {calls / wall:>8.1f} {100 * seconds / wall:>7.3f} "
              f"{1e6 * seconds / max(calls, 1):>8.1f}")
