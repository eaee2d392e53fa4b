"""`bench_sidecar.py stages` clocks the sidecar's functions by name: a function renamed or
moved must fail here, not leave the bench to break the day someone profiles."""
import inspect
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import bench_stages  # noqa: E402


def test_every_stage_names_a_function_of_the_sidecar():
    for _, module_name, qualname in bench_stages.STAGES:
        holder, name = bench_stages.stage_function(module_name, qualname)
        assert inspect.isfunction(getattr(holder, name, None)), f"{module_name}:{qualname}"


def test_the_clock_counts_calls_and_passes_results_and_errors_through():
    spent = {"k": [0, 0.0]}

    def work(x):
        if x < 0:
            raise ValueError(x)
        return sum(i * i for i in range(x))

    clocked = bench_stages._clock(spent, "k", work)
    assert clocked(2000) == work(2000)
    try:
        clocked(-1)
    except ValueError:
        pass
    else:
        raise AssertionError("the error was swallowed")
    assert spent["k"][0] == 2 and spent["k"][1] > 0
