"""scripts/release_canary.py (the release canary) without the network or a real agent: fake
registry answers and fake drivers (a tiny script that writes a fixture folder from committed
captures) in a throwaway repository layout."""
from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import accuracy_table  # noqa: E402
import release_canary as rc  # noqa: E402

from tmux_agentstate.core.fixtures import (  # noqa: E402
    CanaryResult, accuracy_markdown, load_canary, release_key,
)

DROID = ROOT / "fixtures" / "droid"
BLOCKED = DROID / "80x24-blocked-command.raw"
IDLE = DROID / "80x24-idle-start.raw"

# The fake driver: the drivers' CLI (install / capture --version V --out DIR [--only S] / list)
# and one NpmRelease, as the real ones; what it does comes from <agent>.json beside it.
FAKE = textwrap.dedent('''\
    import json, os, subprocess, sys, time
    from pathlib import Path
    sys.path.insert(0, {harness!r})
    import common
    HERE = Path(__file__).resolve()
    CONF = json.loads(HERE.with_suffix(".json").read_text())
    RELEASE = common.NpmRelease(HERE.stem, CONF["package"], HERE.stem, pinned="1.0.0")

    def main():
        a = sys.argv[1:]
        with open(HERE.with_suffix(".calls"), "a") as f:
            f.write(" ".join(a) + "\\n")
        if a[0] == "list":
            print("first-80     80x24")
            print("big-160      160x48")
            return 0
        if a[0] == "install":
            if CONF.get("install_fails"):
                print("npm error notarget No matching version found for fake@9.9.9")
                return 1
            return 0
        out = Path(a[a.index("--out") + 1])
        out.mkdir(parents=True, exist_ok=True)
        if CONF.get("hang"):
            # a detached child (as a tmux server is: a session of its own) and a hung driver
            kid = subprocess.Popen(["sleep", "600"], start_new_session=True)
            (HERE.with_suffix(".pids")).write_text(f"{{os.getpid()}} {{kid.pid}}")
            time.sleep(600)
        lines = ["# fake", ""]
        for name, src, state in CONF["captures"]:
            (out / (name + ".raw")).write_bytes(Path(src).read_bytes())
            lines += ["[[fixture]]", f'file = "{{name}}.raw"', f'state = "{{state}}"', 'kind = "k"',
                      f'agent = "{{HERE.stem}}"', f'agent_version = "{{a[a.index("--version") + 1]}}"',
                      'size = "24x80"', 'how = "fake"', ""]
        (out / "index.toml").write_text("\\n".join(lines))
        return 0

    if __name__ == "__main__":
        sys.exit(main())
    ''')


def fake_repo(tmp_path: Path, agents: dict[str, dict]) -> Path:
    """A repository layout with manifests/<agent>.toml (the real ones) + harness/<agent>.py."""
    root = tmp_path / "repo"
    (root / "manifests").mkdir(parents=True)
    (root / "harness").mkdir()
    (root / "fixtures").mkdir()
    (root / "manifests" / "index.toml").write_text("# not a manifest\n")
    for agent, conf in agents.items():
        (root / "manifests" / f"{agent}.toml").write_text((ROOT / "manifests" / f"{agent}.toml").read_text())
        (root / "harness" / f"{agent}.py").write_text(FAKE.format(harness=str(ROOT / "harness")))
        (root / "harness" / f"{agent}.json").write_text(json.dumps({"package": f"fake-{agent}", **conf}))
    # a driver without a manifest is not covered
    (root / "harness" / "nomanifest.py").write_text("raise SystemExit(1)\n")
    return root


@pytest.fixture
def canary(tmp_path, monkeypatch, capsys):
    """Run the canary's main() over a fake repository; registry answers from `answers`."""
    monkeypatch.setenv("AGENTSTATE_AGENTS_DIR", str(tmp_path / "agents"))
    answers: dict[str, rc.Newest] = {}
    monkeypatch.setitem(rc.REGISTRIES, "npm", lambda pkg: answers[pkg])
    monkeypatch.setattr(rc, "RETRY_PAUSE", 0)

    def run(agents: dict[str, dict], *args: str) -> tuple[int, str, Path]:
        root = fake_repo(tmp_path, agents)
        monkeypatch.setattr(rc, "ROOT", root)
        capsys.readouterr()
        code = rc.main(["--canary-file", str(root / "fixtures" / "canary.toml"), *args])
        return code, capsys.readouterr().out, root
    run.answers = answers
    return run


def test_covered_agents_and_the_package_come_from_the_manifests_and_drivers(tmp_path):
    root = fake_repo(tmp_path, {"droid": {}, "kilo": {}})
    assert rc.covered_agents(root) == ["droid", "kilo"]
    d = rc.driver_info("kilo", root)
    assert (d.registry, d.package, d.pinned, d.error) == ("npm", "fake-kilo", "1.0.0", "")


def test_the_real_drivers_all_name_a_registry_package():
    for agent in rc.covered_agents():
        d = rc.driver_info(agent)
        assert not d.error and d.registry in rc.REGISTRIES and d.package, d


def test_all_right_is_ok_exit_0_and_the_table(canary):
    canary.answers["fake-droid"] = rc.Newest("2.0.0")
    code, out, root = canary({"droid": {"captures": [["80x24-blocked-command", str(BLOCKED), "blocked"],
                                                     ["80x24-idle-start", str(IDLE), "idle"]]}})
    assert code == 0, out
    row = [ln for ln in out.splitlines() if ln.startswith("droid ")][-1]
    assert row.split() == ["droid", "npm", "2.0.0", "1.0.0", "newer", "2/2", "ok"]
    assert "MISS" not in out
    calls = (root / "harness" / "droid.calls").read_text().splitlines()
    assert calls[0] == "install --version 2.0.0"
    assert calls[1].startswith("capture --version 2.0.0 --out ") and "--only" not in calls[1]
    assert str(root / "fixtures") not in calls[1]          # never into fixtures/


def test_a_miss_exits_1_and_prints_its_screen(canary):
    canary.answers["fake-droid"] = rc.Newest("2.0.0")
    code, out, root = canary({"droid": {"captures": [["80x24-blocked-command", str(BLOCKED), "idle"],
                                                     ["80x24-idle-start", str(IDLE), "idle"]]}})
    assert code == 1
    row = [ln for ln in out.splitlines() if ln.startswith("droid ")][-1]
    assert "1/2" in row and row.endswith("1 miss")
    assert "== MISS droid 2.0.0/80x24-blocked-command: want idle, got blocked" in out
    screen = (DROID / "80x24-blocked-command.screen.txt").read_text().split("\n")
    assert any(ln.strip() and ("  |" + ln.rstrip()) in out for ln in screen)
    saved = load_canary(root / "fixtures" / "canary.toml")["droid"]
    assert (saved.release, saved.right, saved.total, saved.result) == ("2.0.0", 1, 2, "misses")


def test_quick_runs_the_first_listed_session(canary):
    canary.answers["fake-droid"] = rc.Newest("2.0.0")
    code, out, root = canary({"droid": {"captures": [["80x24-idle-start", str(IDLE), "idle"]]}}, "--quick")
    assert code == 0, out
    assert (root / "harness" / "droid.calls").read_text().splitlines()[-1].endswith("--only first-80")
    assert load_canary(root / "fixtures" / "canary.toml")["droid"].quick


def test_does_not_install_is_a_row_not_a_crash(canary):
    canary.answers["fake-droid"] = rc.Newest("9.9.9")
    canary.answers["fake-kilo"] = rc.Newest("3.0.0")
    code, out, root = canary({"droid": {"install_fails": True, "captures": []},
                              "kilo": {"captures": []}}, "--agents", "droid")
    assert code == 1
    row = [ln for ln in out.splitlines() if ln.startswith("droid ")][-1]
    assert "DOES NOT INSTALL: npm error notarget No matching version found for fake@9.9.9" in row
    calls = (root / "harness" / "droid.calls").read_text().splitlines()
    assert calls == ["install --version 9.9.9"] * 2                 # tried once more, no capture
    assert not (root / "harness" / "kilo.calls").exists()            # --agents
    assert load_canary(root / "fixtures" / "canary.toml")["droid"].result == "does-not-install"


def test_a_retired_stub_is_never_started(canary):
    canary.answers["fake-droid"] = rc.Newest("1.52.0", retired="PyPI: 'Development Status :: 7 - Inactive'")
    code, out, root = canary({"droid": {"captures": []}})
    assert code == 0, out
    assert "RETIRED" in [ln for ln in out.splitlines() if ln.startswith("droid ")][-1]
    assert not (root / "harness" / "droid.calls").exists()
    assert load_canary(root / "fixtures" / "canary.toml")["droid"].result == "retired"


def test_retired_is_read_from_the_registry_metadata_not_the_name(monkeypatch, tmp_path):
    def urlopen(url, timeout=None):
        info = {"version": "1.52.0", "summary": "[Archived] no longer maintained",
                "classifiers": ["Development Status :: 7 - Inactive"]}
        if "active" in url:
            info = {"version": "2.0.0rc1", "summary": "x",
                    "classifiers": ["Development Status :: 5 - Production/Stable"]}
        return io.BytesIO(json.dumps({"info": info}).encode())
    monkeypatch.setattr(rc.urllib.request, "urlopen", urlopen)
    old = rc.pypi_newest("some-cli")
    assert old.version == "1.52.0" and "Inactive" in old.retired
    assert rc.pypi_newest("active-cli") == rc.Newest("2.0.0rc1", "")
    # npm: a deprecated latest release (a fake `npm` on PATH)
    npm = tmp_path / "bin" / "npm"
    npm.parent.mkdir()
    npm.write_text('#!/bin/sh\ncase "$*" in\n'
                   '  *old*) echo \'{"version": "3.1.0", "deprecated": "use new-cli"}\';;\n'
                   '  *) echo \'"4.0.0"\';;\nesac\n')
    npm.chmod(0o755)
    monkeypatch.setenv("PATH", f"{npm.parent}{os.pathsep}{os.environ['PATH']}")
    assert rc.npm_newest("old-cli") == rc.Newest("3.1.0", "npm: deprecated: use new-cli")
    assert rc.npm_newest("new-cli") == rc.Newest("4.0.0", "")


def test_a_timeout_kills_the_driver_group_and_what_names_the_run_only(canary, tmp_path):
    canary.answers["fake-droid"] = rc.Newest("2.0.0")
    bystander = subprocess.Popen(["sleep", "600"], start_new_session=True)
    try:
        t0 = time.time()
        code, out, root = canary({"droid": {"hang": True, "captures": []}}, "--capture-timeout", "4")
        assert time.time() - t0 < 60
        assert code == 1
        assert "FAILED: capture timed out" in out
        driver, kid = map(int, (root / "harness" / "droid.pids").read_text().split())
        for pid in (driver, kid):   # the driver (its group) and its detached child (by the marker)
            assert not Path(f"/proc/{pid}").exists() or \
                Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z", pid
        assert bystander.poll() is None                              # others untouched
    finally:
        bystander.kill()
        bystander.wait()


def test_canary_toml_round_trip_and_merge(tmp_path):
    path = tmp_path / "canary.toml"
    a = rc.Row("kilo", "npm", "@kilocode/cli", "7.8.1", "7.7.7", 10, 11, "misses", 'a "quoted" note')
    rc.write_canary(path, [a], "2026-12-06", True)
    b = rc.Row("aider", "pypi", "aider-chat", "0.86.2", "0.86.2", 0, 0, "does-not-install", "pip: no")
    rc.write_canary(path, [b], "2026-12-07", False)   # a later run of one agent keeps the others
    got = load_canary(path)
    assert got["kilo"] == CanaryResult("kilo", "7.8.1", "npm", "@kilocode/cli", 10, 11, "misses",
                                       'a "quoted" note', True, "2026-12-06")
    assert got["aider"].result == "does-not-install" and got["aider"].date == "2026-12-07"


def test_accuracy_table_column(tmp_path, capsys):
    rows = [("kilo", "7.7.7", "blocked", 2, 2), ("kilo", "7.7.7", "idle", 3, 3),
            ("kimi", "1.51.0", "idle", 1, 1), ("pi", "1.5.2", "idle", 1, 1), ("pi", "1.6.0", "idle", 1, 1),
            ("x", "1.0", "idle", 1, 1)]
    canary = {"kilo": CanaryResult("kilo", "7.8.1", right=5, total=5, result="ok", quick=True,
                                   date="2026-12-06"),
              "kimi": CanaryResult("kimi", "1.52.0", result="retired"),
              "pi": CanaryResult("pi", "1.7.0", result="does-not-install")}
    lines = accuracy_markdown(rows, canary).splitlines()
    assert lines[0].endswith("| newest release (canary) |")
    assert lines[2] == "| kilo | 7.7.7 | 2/2 | – | 3/3 | 5/5 | 7.8.1: 5/5 (one session, 2026-12-06) |"
    assert lines[3] == "| kimi | 1.51.0 | – | – | 1/1 | 1/1 | 1.52.0: retired (a stub), not run |"
    assert lines[4] == "| pi | 1.5.2 | – | – | 1/1 | 1/1 | |"      # every release kept; the value
    assert lines[5] == "| pi | 1.6.0 | – | – | 1/1 | 1/1 | 1.7.0: does not install |"  # on the newest
    assert lines[6] == "| x | 1.0 | – | – | 1/1 | 1/1 | |"
    # no canary.toml: the column, no values; an invalid one: one line, no traceback
    assert accuracy_table.canary_results(tmp_path / "none.toml") == {}
    bad = tmp_path / "canary.toml"
    bad.write_text("[[agent]]\nrelease = 'x'\n")     # no agent
    assert accuracy_table.canary_results(bad) == {}
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err and "canary.toml" in err
    bad.write_text("[[agent\n")
    assert accuracy_table.canary_results(bad) == {}
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_accuracy_table_script_with_an_invalid_canary_file_is_one_line(tmp_path):
    bad = tmp_path / "canary.toml"
    bad.write_text("not = [toml")
    code = ("import sys; sys.path.insert(0, 'scripts'); import accuracy_table as a; "
            "from pathlib import Path; "
            f"print(a.accuracy_markdown([], a.canary_results(Path({str(bad)!r}))))")
    p = subprocess.run([sys.executable, "-c", code],
                       cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 0 and len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_the_canary_compares_releases_with_release_key():
    row = rc.Row("a", release="1.0.0rc1", pinned="1.0.0")
    assert row.against_pinned() == "OLDER"
    assert rc.Row("a", release="1.0.0.post1", pinned="1.0.0").against_pinned() == "newer"
    assert rc.Row("a", release="1.0", pinned="1.0.0").against_pinned() == "same"


def test_release_key_orders_suffixed_releases_and_never_raises():
    assert release_key("1.0.0rc1") < release_key("1.0.0")       # no TypeError
    order = ["0.9", "1.0.0.dev1", "1.0.0a1", "1.0.0-alpha.2", "1.0.0b1", "1.0.0-beta.2", "1.0.0rc1",
             "1.0.0", "1.0.0.post1", "1.0.1", "1.9.0", "1.10.0", "v2.0.0"]
    assert sorted(reversed(order), key=release_key) == order
    assert release_key("1.0") == release_key("1.0.0")
    sorted(["1.0.0", "nightly", "", "1.0.0-canary.3", "2024.12.1", "0.0.34"], key=release_key)
    # today's plain releases: the numeric order the accuracy table had
    today = ["0.1.4", "0.24.4", "0.64.0", "0.142.5", "0.153.4", "0.171.0", "1.0.185", "1.1.65",
             "1.3.2", "1.14.41", "1.18.33", "2.1.220", "2.1.332"]
    assert sorted(reversed(today), key=release_key) == today


def test_ctrl_c_kills_the_running_driver_and_its_detached_children(tmp_path):
    """SIGINT (Ctrl-C) to the canary: the hung driver's group and what names the run die, the
    canary says so and exits 130 (nothing written)."""
    root = fake_repo(tmp_path, {"droid": {"hang": True, "captures": []}})
    wrapper = tmp_path / "run.py"
    wrapper.write_text(textwrap.dedent(f'''\
        import sys
        sys.path.insert(0, {str(ROOT / "scripts")!r})
        import release_canary as rc
        from pathlib import Path
        rc.ROOT = Path({str(root)!r})
        rc.REGISTRIES["npm"] = lambda pkg: rc.Newest("2.0.0")
        sys.exit(rc.main(["--canary-file", {str(root / "fixtures" / "canary.toml")!r}]))
        '''))
    env = {**os.environ, "AGENTSTATE_AGENTS_DIR": str(tmp_path / "agents")}
    p = subprocess.Popen([sys.executable, str(wrapper)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, env=env, start_new_session=True)
    pids = root / "harness" / "droid.pids"
    try:
        end = time.time() + 60
        while not pids.exists() and time.time() < end:
            time.sleep(0.1)
        assert pids.exists()
        time.sleep(0.3)
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, out
    assert "interrupted" in out and "Traceback" not in out
    for pid in map(int, pids.read_text().split()):
        assert not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    assert not (root / "fixtures" / "canary.toml").exists()


def test_the_drivers_session_dirs_go_unless_keep(canary, tmp_path):
    """A driver's throwaway session dirs carry its PID; the canary removes those (only) after it."""
    canary.answers["fake-droid"] = rc.Newest("2.0.0")
    agents = tmp_path / "agents"
    other = agents / "droid-run-first-80-1-1700000000"       # another run's: stays
    other.mkdir(parents=True)
    seen = []
    real_run = rc.run_driver

    def run_driver(cmd, **kw):
        r = real_run(cmd, **kw)
        if "capture" in cmd:
            (agents / f"droid-run-first-80-{r.pid}-1700000001").mkdir()
            seen.append(agents / f"droid-run-first-80-{r.pid}-1700000001")
        return r
    rc_run = pytest.MonkeyPatch()
    rc_run.setattr(rc, "run_driver", run_driver)
    try:
        code, out, _ = canary({"droid": {"captures": [["80x24-idle-start", str(IDLE), "idle"]]}})
    finally:
        rc_run.undo()
    assert code == 0, out
    assert seen and not seen[0].exists() and other.exists()


def test_todays_captured_releases_keep_their_order():
    """The accuracy table's rows: release_key orders today's releases as the old numeric key did."""
    from tmux_agentstate.core.fixtures import load_index

    def old_key(v: str) -> tuple:
        return tuple(int(p) if p.isdigit() else p for p in v.replace("-", ".").split("."))
    by_agent: dict[str, set[str]] = {}
    for f in load_index():
        by_agent.setdefault(f.agent, set()).add(f.agent_version)
    for agent, versions in by_agent.items():
        assert sorted(versions, key=release_key) == sorted(versions, key=old_key), agent
