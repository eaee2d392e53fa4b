"""`tmux-agentstate classify` as a user runs it: real process, real files, one-line errors."""
import json
import random
import subprocess
import sys

import pytest

from tmux_agentstate.core.fixtures import load_index

PROMPT = ("\x1b[?1049h\x1b[H\x1b[2J\r\x1b[1C\x1b[1B\x1b[39mDo\x1b[5Gyou\x1b[9Gwant\x1b[14Gto\x1b[17G"
          "proceed?\r\x1b[1C\x1b[1B\u276f\x1b[4G1. Yes\r\x1b[3C\x1b[1B2. No\r\x1b[1C\x1b[2B"
          "Esc to cancel \u00b7 Tab to amend").encode()


def run(*args, env=None):
    return subprocess.run([sys.executable, "-m", "tmux_agentstate", "classify", *args],
                          capture_output=True, text=True, env=env)


def assert_one_line_error(proc):
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


def test_json_output_fields(tmp_path, isolated_config):
    f = tmp_path / "prompt.raw"
    f.write_bytes(PROMPT)
    proc = run("--agent", "claude", "--json", str(f))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["file"] == str(f) and out["agent"] == "claude" and out["state"] == "blocked"
    assert out["rule"] and "Do you want to proceed?" in out["line"]


def test_agent_inferred_from_screen(tmp_path, isolated_config):
    f = tmp_path / "prompt.raw"
    f.write_bytes(PROMPT)
    proc = run("--json", str(f))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["agent"] == "claude"


def test_size_option_changes_the_screen(tmp_path, isolated_config):
    f = tmp_path / "far.raw"
    # at column 90 the words fit a 160-column screen and wrap apart on an 80-column one
    f.write_bytes("\x1b[1;90HDo you want to proceed?\x1b[2;90H\u276f 1. Yes\x1b[3;90HEsc to cancel".encode())
    small = json.loads(run("--agent", "claude", "--json", "--size", "24x80", str(f)).stdout)
    big = json.loads(run("--agent", "claude", "--json", "--size", "48x160", str(f)).stdout)
    assert big["state"] == "blocked" and big["line"] == " " * 89 + "Do you want to proceed?"
    assert small["state"] == "idle"


@pytest.mark.parametrize("case", ["empty", "random", "missing", "unknown-agent", "unknown-screen"])
def test_bad_input_one_line_error(tmp_path, isolated_config, case):
    f = tmp_path / "capture.raw"
    args = ["--agent", "claude", str(f)]
    if case == "empty":
        f.write_bytes(b"")
    elif case == "random":
        f.write_bytes(random.Random(7).randbytes(1 << 20))
    elif case == "unknown-agent":
        f.write_bytes(PROMPT)
        args = ["--agent", "no-such-agent", str(f)]
    elif case == "unknown-screen":
        f.write_bytes(b"$ ls\r\nREADME.md\r\n$ ")
        args = [str(f)]
    line = assert_one_line_error(run(*args))
    assert {"empty": "empty", "random": "not terminal output", "missing": "No such file",
            "unknown-agent": "unknown agent", "unknown-screen": "--agent"}[case] in line


def test_truncated_utf8_still_classifies_with_a_warning(tmp_path, isolated_config):
    f = tmp_path / "cut.raw"
    f.write_bytes(PROMPT + "\u276f".encode()[:2])
    proc = run("--agent", "claude", str(f))
    assert "blocked" in proc.stdout
    assert "UTF-8" in assert_one_line_error(proc)


@pytest.mark.parametrize("text, reason", [
    ('name = "claude"\n[[rules]]\nid = "x"\nstate = "blocked"\nany = ["(unclosed"]\n', "bad regex"),
    ('name = "claude"\n[[rules]]\nid = "x"\nstate = "stuck"\nany = ["x"]\n', "'state' must be one of"),
])
def test_broken_user_manifest_is_reported(tmp_path, isolated_config, text, reason):
    d = isolated_config / "tmux-agentstate" / "manifests"
    d.mkdir(parents=True)
    (d / "claude.toml").write_text(text)
    f = tmp_path / "prompt.raw"
    f.write_bytes(PROMPT)
    proc = run("--agent", "claude", "--json", str(f))
    line = assert_one_line_error(proc)
    assert reason in line and "claude.toml" in line and "rule 'x'" in line
    # the bundled rules keep running
    assert json.loads(proc.stdout)["state"] == "blocked"


def test_classify_real_fixtures_in_one_call(isolated_config):
    fixtures = [f for f in load_index() if f.rows == 24 and f.cols == 80][:10]
    if not fixtures:
        pytest.skip("no 24x80 fixtures committed")
    proc = run("--json", "--size", "24x80", *[str(f.path) for f in fixtures])
    got = [json.loads(l) for l in proc.stdout.splitlines()]
    assert [(g["agent"], g["state"]) for g in got] == [(f.agent, f.state) for f in fixtures]
