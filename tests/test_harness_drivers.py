"""Every capture driver in harness/ imports, lists its sessions and takes `--version` / `--out`
(the CLI the release canary runs). No agent, no mock, no tmux needed."""
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parents[1] / "harness"
DRIVERS = ["aider", "claude", "cline", "codex", "copilot", "droid", "gemini", "grok", "hermes", "kilo",
           "opencode", "pi", "qwen"]
sys.path.insert(0, str(HARNESS))


def driver(name):
    return importlib.import_module(name)


@pytest.mark.parametrize("name", DRIVERS)
def test_driver_lists_its_sessions(name):
    out = subprocess.run([sys.executable, str(HARNESS / f"{name}.py"), "list"], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    rows = [r for r in out.stdout.splitlines() if r.strip()]
    assert rows, f"{name}: no sessions listed"
    mod = driver(name)
    names = [getattr(s, "name", s) for s in getattr(mod, "SESSIONS", [])]   # claude.py: a dict
    assert names and {r.split()[0].rstrip(":") for r in rows} >= set(names)


MOVED = [n for n in DRIVERS if hasattr(driver(n), "DRIVER")]


@pytest.mark.parametrize("name", MOVED)
def test_version_and_out_repoint_the_release(name, tmp_path, monkeypatch):
    """`install --version V --out DIR` through the driver's own CLI: the release's prefix, binary
    and fixture folder point at V and DIR, and a session's Ctx reads them."""
    d = driver(name).DRIVER
    r = d.release
    pinned_out = r.out
    seen = []
    monkeypatch.setattr(r, "install", lambda: seen.append((r.version, r.prefix, r.bin, r.out)))
    monkeypatch.setattr(sys, "argv", [f"{name}.py", "install", "--version", "9.9.9", "--out", str(tmp_path)])
    try:
        d.main()
        assert seen, "install never ran"
        version, prefix, bin_, out = seen[0]
        assert version == "9.9.9" and "9.9.9" in prefix.name and bin_.is_relative_to(prefix)
        assert out == tmp_path.resolve()
        ctx = d.ctx(d.sessions[0], None, None, {})
        assert (ctx.agent, ctx.version, ctx.out) == (r.agent, "9.9.9", tmp_path.resolve())
        r.configure("9.9.9", None)   # another release, no --out: fixtures/<agent>/<version>/
        assert r.out.parts[-3:] == ("fixtures", r.agent, "9.9.9")
    finally:
        r.configure(r.pinned, None)
    assert r.out == pinned_out and r.version == r.pinned
    assert r.out.is_relative_to(Path(__file__).resolve().parents[1] / "fixtures" / r.agent)


def test_release_tables():
    import common
    r = common.NpmRelease("demo", "demo", "demo", pinned="0.24.4")
    table = {"0.5.0": "new", "0.0.0": "old", "1.0.0": "newest"}
    assert r.pick(table) == "new" and r.since("0.5.0") and r.until("1.0.0") and not r.older_than("0.24.4")
    r.configure("0.1.4", None)
    assert r.pick(table) == "old" and r.pick([("0.5.0", "new"), ("0.2.0", "mid")]) == "mid"
    r.configure("1.2.0", None)
    assert r.pick(table) == "newest"


def test_claude_version_and_out_repoint_paths_and_screens(tmp_path, monkeypatch):
    """claude.py keeps its own runner: `--version` / `--out` through its configure, the release's
    screens read from its UI table."""
    claude = driver("claude")
    agents = tmp_path / "agents"                           # its runs/ folders go here
    monkeypatch.setattr(claude, "AGENTS", agents)
    monkeypatch.setattr(claude.common, "AGENTS", agents)
    try:
        claude.configure("1.0.128", tmp_path)
        assert claude.VERSION == "1.0.128" and claude.BIN.is_relative_to(agents / "claude-1.0.128")
        assert claude.OUT == tmp_path.resolve() and claude.PROMPT == ">" and "ask" in claude.UNSUPPORTED
        claude.configure("2.1.220", None)
        assert claude.OUT.parts[-3:] == ("fixtures", "claude", "2.1.220") and claude.STALE_WORKING_ROW
    finally:
        monkeypatch.undo()
        claude.configure(claude.PINNED, None)
    assert claude.OUT.parts[-2:] == ("fixtures", "claude") and claude.PROMPT == "❯"
    assert claude.FIRSTRUN_WALK == [] and claude.RUNS == claude.AGENTS
