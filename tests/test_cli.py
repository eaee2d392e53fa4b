"""A newcomer's first minutes with the command line (issue 25 items 6 and 8): `--version`,
-L/-S before or after the command, every command's --help with its purpose and examples that
parse, one line on what to do outside tmux, and no control character from a pane, an option
or a process ever printed raw."""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from conftest import wait_for
from test_wheel import wheel_venv  # noqa: F401  (the fixture: this checkout's wheel, installed)
from tmux_agentstate.cli import build_parser


def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "tmux_agentstate", *args], capture_output=True,
                          env=env, timeout=60)


def subcommands(parser=None, path=()):
    """(path, parser) for every command, nested ones (`manifests list`) included."""
    parser = parser or build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*path, name), sub
                yield from subcommands(sub, (*path, name))


def talks_to_tmux(sub) -> bool:
    return any("-L" in a.option_strings for a in sub._actions)


def outside_env(tmp_path) -> dict:
    """Outside tmux, no default server (tmux's folder for it is empty)."""
    env = dict(os.environ, TMUX_TMPDIR=str(tmp_path / "no-tmux"))
    (tmp_path / "no-tmux").mkdir(exist_ok=True)
    env.pop("TMUX", None)
    env.pop("TMUX_PANE", None)
    return env


def test_version_is_the_installed_one():
    out = cli("--version")
    assert out.returncode == 0 and out.stderr == b""
    assert out.stdout.decode() == f"tmux-agentstate {metadata.version('tmux-agentstate')}\n"


def test_every_command_says_its_purpose_and_examples_that_parse():
    commands = list(subcommands())
    assert {" ".join(p) for p, _ in commands} >= {"list", "explain", "manifests update", "doctor"}
    for path, sub in commands:
        name = " ".join(path)
        text = sub.format_help()
        purpose = (sub.description or "").strip()
        assert purpose and "\n" not in purpose and purpose.endswith("."), (name, purpose)
        assert f"\n\n{purpose}\n" in text, name
        assert (sub.epilog or "").startswith("examples:\n"), (name, sub.epilog)
        examples = [line.strip() for line in sub.epilog.splitlines()[1:] if line.strip()]
        assert examples and all(f"tmux-agentstate {name}" in e for e in examples), (name, examples)
        for e in examples:  # an example that does not parse teaches the wrong thing
            argv = shlex.split(e.split("tmux-agentstate", 1)[1])
            try:
                args = build_parser().parse_args(argv)
            except SystemExit:
                pytest.fail(f"{name}: the example {e!r} does not parse")
            assert args.command == path[0]
    # as a user sees it
    out = cli("manifests", "update", "--help")
    assert out.returncode == 0 and b"Fetch newer manifests" in out.stdout and \
        b"examples:\n  tmux-agentstate manifests update" in out.stdout


def test_server_options_before_or_after_the_command(tmux_server):
    tmux_commands = [(p, s) for p, s in subcommands() if talks_to_tmux(s)]
    assert {p[0] for p, _ in tmux_commands} >= {"list", "explain", "status", "start", "watch",
                                               "stop", "popup", "next", "send", "answer",
                                               "report", "record", "doctor"}
    from tmux_agentstate.cli.common import merge_server
    parser = build_parser()
    for path, sub in tmux_commands:
        rest = ["%1"] * sum(1 for a in sub._actions if not a.option_strings
                            and a.nargs != argparse.REMAINDER)
        for flag, value in (("-L", "work"), ("-S", "/tmp/some/socket")):
            before = parser.parse_args([flag, value, *path, *rest])
            after = parser.parse_args([*path, flag, value, *rest])
            assert merge_server(before) is None and merge_server(after) is None
            assert (before.L, before.S) == (after.L, after.S) and value in (after.L, after.S), path
    # for real: the same list either way
    pane = tmux_server.new_pane("sleep 600")
    tmux_server.cmd("set-option", "-p", "-t", pane, "@agentstate", "idle")
    tmux_server.cmd("set-option", "-p", "-t", pane, "@agentstate_agent", "claude")
    env = dict(os.environ)
    env.pop("TMUX", None)
    first = cli("-L", tmux_server.name, "list", "--json", env=env)
    second = cli("list", "--json", "-L", tmux_server.name, env=env)
    assert first.returncode == 0 and first.stdout == second.stdout
    assert json.loads(first.stdout)["agent"] == "claude"
    for argv, words in ((["-L", "a", "list", "-S", "/tmp/b"], b"-L and -S"),
                        (["-L", "a", "list", "-L", "b"], b"-L given twice"),
                        (["-L", "a", "classify", "x.raw"], b"does not talk to tmux")):
        out = cli(*argv, env=env)
        assert out.returncode == 2 and words in out.stderr and b"Traceback" not in out.stderr


def test_outside_tmux_every_command_says_what_to_do(tmp_path):
    env = outside_env(tmp_path)
    default = tmp_path / "no-tmux" / f"tmux-{os.getuid()}" / "default"
    for path, sub in subcommands():
        if not talks_to_tmux(sub) or path in (("doctor",), ("stream",)):
            continue  # doctor says it as one of its checks, stream in its beats (test_stream)
        rest = ["%1"] * sum(1 for a in sub._actions if not a.option_strings
                            and a.nargs != argparse.REMAINDER)
        out = cli(*path, *rest, env=env)
        err = out.stderr.decode()
        assert out.returncode != 0 and out.stdout == b"", (path, out)
        assert err == (f"tmux-agentstate: not inside tmux and no tmux server at {default}: run "
                       "this inside tmux, or name a server with -L NAME / -S PATH\n"), (path, err)
        assert not default.parent.exists() or not list(default.parent.iterdir())
    # a named server that does not run: said the same way
    out = cli("list", "-L", "nobody-runs-this", env=env)
    assert out.returncode == 1 and out.stderr.decode().count("\n") == 1
    assert b"no tmux server named 'nobody-runs-this'" in out.stderr and b"Traceback" not in out.stderr
    gone = dict(env, TMUX=f"{tmp_path}/ended-server,123,0")  # a shell its tmux outlived
    out = cli("list", env=gone)
    assert out.returncode == 1 and out.stderr.decode() == (
        f"tmux-agentstate: $TMUX names {tmp_path}/ended-server, where no tmux server runs now: "
        "run this in a live tmux, or name a server with -L NAME / -S PATH\n")
    out = cli("doctor", env=env)
    assert b"no tmux server" in out.stdout and b"Traceback" not in out.stderr


# every C0 control but the newline, DEL, and C1 controls (U+0080-U+009F, as UTF-8)
RAW_CONTROL = re.compile(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")
HOSTILE = "\x1b]52;c;aGkK\x07\x1b[2J\x1b[31mred\x07\x9b6n\x7f"


def test_no_control_character_from_a_pane_reaches_the_terminal(tmux_server, tmp_path):
    """A pane whose title, screen and process carry escape sequences, OSC 52 (set the
    clipboard) and BEL, with options another program set to the same (any process in tmux
    may `tmux set -p`): `explain`, `list`, `status`-like output print them escaped, and
    `list --json` stays JSON that gives the values back."""
    script = tmp_path / "hostile.py"
    script.write_text(
        "import sys, time\n"
        f"sys.stdout.write('\\x1b]2;title' + {HOSTILE!r} + '\\x07')\n"  # a title with controls
        f"sys.stdout.write('screen ' + {HOSTILE!r} + ' \\u009b31m end\\n')\n"
        "sys.stdout.flush()\n"
        "time.sleep(600)\n")
    # the process's own name (argv[0]) carries them too
    start = f"import os, sys; os.execv(sys.executable, [{HOSTILE!r}, {str(script)!r}])"
    pane = tmux_server.new_pane(f"env AGENTSTATE_AGENT=claude {sys.executable} -c "
                                f"{shlex.quote(start)}")
    wait_for(lambda: " end" in tmux_server.cmd("capture-pane", "-p", "-t", pane),
             message="the hostile screen")
    for option in ("@agentstate_agent", "@agentstate_detail", "@agentstate_error",
                   "@agentstate_agent_version"):
        tmux_server.cmd("set-option", "-p", "-t", pane, option, f"v{HOSTILE}")
    tmux_server.cmd("set-option", "-p", "-t", pane, "@agentstate", "blocked")
    env = dict(os.environ)
    env.pop("TMUX", None)
    explain = cli("explain", "-L", tmux_server.name, pane, env=env)
    assert explain.returncode == 0, explain.stderr
    assert HOSTILE.encode()[:4] not in explain.stdout
    assert b"\\x1b]52;c;aGkK\\x07" in explain.stdout  # the process's argument, shown escaped
    listed = cli("list", "-L", tmux_server.name, env=env)
    assert listed.returncode == 0 and b"\\x1b]52;c;aGkK\\x07" in listed.stdout
    as_json = cli("list", "--json", "-L", tmux_server.name, env=env)
    assert as_json.returncode == 0
    [row] = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert row["agent"] == row["error"] == row["agent_version"] == f"v{HOSTILE}"
    for out in (explain, listed, as_json):
        assert not RAW_CONTROL.search(out.stdout + out.stderr), \
            RAW_CONTROL.search(out.stdout + out.stderr)
    # an error that quotes what the user typed: escaped too
    out = cli("explain", "-L", tmux_server.name, f"%9{HOSTILE}", env=env)
    assert out.returncode != 0 and not RAW_CONTROL.search(out.stdout + out.stderr), out.stderr


def test_safe_escapes_every_control_and_keeps_text():
    from tmux_agentstate.cli.common import safe, safe_json
    assert safe("a\x1b[31mb\x07c\x9bd\x7fe\tf\ng") == "a\\x1b[31mb\\x07c\\x9bd\\x7fe\\x09f\\x0ag"
    assert safe("naïve — ✓ 日本") == "naïve — ✓ 日本"
    assert safe(b"\xff\xfe".decode("utf-8", "surrogateescape")) == "\\xff\\xfe"
    text = "x\x1b\x07\x9b\x7f\udcff"
    assert json.loads(safe_json({"k": text}))["k"] == text
    assert not RAW_CONTROL.search(safe_json({"k": text}).encode("utf-8", "surrogatepass"))


def test_the_installed_wheel_says_its_version_and_what_to_do_outside_tmux(wheel_venv, tmp_path):
    venv, env, base = wheel_venv
    pyproject = (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text()
    version = re.search(r'^version = "([^"]+)"', pyproject, re.M).group(1)
    script = venv / "bin" / "tmux-agentstate"
    out = subprocess.run([script, "--version"], capture_output=True, text=True, env=env, cwd=base)
    assert out.returncode == 0 and out.stdout == f"tmux-agentstate {version}\n"
    env = dict(env, TMUX_TMPDIR=str(tmp_path / "no-tmux"))
    out = subprocess.run([script, "list"], capture_output=True, text=True, env=env, cwd=base)
    assert out.returncode == 1 and out.stderr.startswith("tmux-agentstate: not inside tmux and no "
                                                         "tmux server at ") and \
        out.stderr.count("\n") == 1
