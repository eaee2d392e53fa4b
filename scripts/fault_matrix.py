#!/usr/bin/env python3
"""The fault matrix as figures: each fault of tests/test_faults.py injected N times into a real
tmux with a watching sidecar; from the injection, the time until every state is right (equal
to a fresh look at tmux's screen) and until nothing is left behind (FIFOs, pipes, options, a
traceback in the log). Not a test: prints a table.

    .venv/bin/python scripts/fault_matrix.py [--runs 5] [--mb 100]

With --input: the faults in what the sidecar reads and writes (tests/test_faults_input.py:
hostile agent files and manifests, a full disk, the fd limit, tmux's command-line limit, a
sidecar dying at start), each once, as a table of fault → result → what was checked after it.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--mb", type=int, default=100, help="the flood's size (random bytes: a tenth)")
    ap.add_argument("--input", action="store_true", help="the input faults' table instead")
    args = ap.parse_args()
    if args.input:
        return input_faults()
    with tempfile.TemporaryDirectory() as tmp:
        timings = Path(tmp) / "timings.jsonl"
        env = dict(os.environ, AGENTSTATE_FAULT_TIMINGS=str(timings), AGENTSTATE_FAULT_MB=str(args.mb))
        failed = 0
        for _ in range(args.runs):
            r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                "tests/test_faults.py"], cwd=ROOT, env=env,
                               capture_output=True, text=True)
            failed += r.returncode != 0
            if r.returncode:
                print(r.stdout[-2000:])
        rows = [json.loads(line) for line in timings.read_text().splitlines()] if timings.exists() else []
    by = defaultdict(list)
    for row in rows:
        by[row["test"].split("::")[-1]].append(row)
    print(f"{args.runs} runs, flood {args.mb} MB, random bytes {max(1, args.mb // 10)} MB; "
          f"runs with a failure: {failed}")
    print(f"{'fault (a step of it)':<72} {'n':>3} {'right med/max s':>16} {'clean max s':>12}")
    for test, got in sorted(by.items()):
        right = [g["right"] for g in got]
        print(f"{test:<72} {len(got):>3} {statistics.median(right):7.2f} /{max(right):6.2f} "
              f"{max(g['clean'] for g in got):12.2f}")
    return 1 if failed else 0


def input_faults() -> int:
    """tests/test_faults_input.py once; a row per fault: the result and what its test checks
    after it (the test's own first doc line)."""
    import importlib
    import xml.etree.ElementTree as ET
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]
    tests = importlib.import_module("test_faults_input")
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "junit.xml"
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            f"--junitxml={report}", "tests/test_faults_input.py"], cwd=ROOT,
                           capture_output=True, text=True)
        cases = ET.parse(report).getroot().iter("testcase")
        rows = []
        for case in cases:
            name = case.get("name")
            result = ("FAILED" if case.find("failure") is not None or case.find("error") is not None
                      else "skipped" if case.find("skipped") is not None else "passed")
            doc = " ".join((getattr(tests, name.split("[")[0]).__doc__ or "").split())
            after = doc.partition("After: ")[2] or "-"
            rows.append((name.removeprefix("test_"), result, float(case.get("time", 0)), after))
    print(f"| fault | result | s | the sidecar after it |\n|---|---|---|---|")
    for name, result, secs, after in rows:
        print(f"| {name} | {result} | {secs:.1f} | {after} |")
    return r.returncode


if __name__ == "__main__":
    raise SystemExit(main())
