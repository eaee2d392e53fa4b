"""The README is part of the product: its accuracy table and its commands must be true."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import accuracy_table  # noqa: E402


def test_accuracy_table_in_readme_is_current():
    current = accuracy_table.in_readme((ROOT / "README.md").read_text())
    assert current is not None, "README.md lost its accuracy-table markers"
    assert current == accuracy_table.generated(), \
        "README's accuracy table is stale: run .venv/bin/python scripts/accuracy_table.py --write"


def test_readme_names_the_commands_ci_runs():
    readme = (ROOT / "README.md").read_text()
    first_screen = "\n".join(readme.splitlines()[:20])
    assert "./scripts/test" in first_screen and "./scripts/demo" in first_screen
    assert "./scripts/test" in (ROOT / ".ci" / "run").read_text()


def test_cli_help_lists_the_contract_commands():
    out = subprocess.run([sys.executable, "-m", "tmux_agentstate", "--help"], capture_output=True,
                         text=True).stdout
    for name in ("classify", "watch", "start", "stop", "status", "list", "popup", "hook",
                 "launch", "explain", "send", "answer", "doctor", "manifests", "report"):
        assert name in out
