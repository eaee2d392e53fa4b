"""`launch AGENT [ARGS...]`: run an agent with our hooks injected for this launch only.

Nothing in the user's own config is edited. The agent replaces this process (exec), so to the
user `alias claude='tmux-agentstate launch claude'` is `claude`: same args, tty, signals and
exit code. Hooks report through `python -m tmux_agentstate.hook AGENT EVENT` (report.py).

Proof of origin (core/origin.py): a launch that is its pane's foreground makes a secret token,
records "TOKEN PID" on the pane (`@agentstate_launch`; PID is ours, which the agent keeps across
the exec) and hands the token and PID to the agent in its environment; its hooks present them.
A launch inside another agent's tool call (it inherits that agent's pane and token) records
nothing and clears what it inherited: the pane stays the agent's in front.
"""
from __future__ import annotations

import json
import os
import secrets
import shlex
import shutil
import sys
from pathlib import Path
from typing import NoReturn

from .launch_files import remove_when_gone, write_launch_settings

# PostToolUseFailure: an approved command that exits non-zero fires it *instead of* PostToolUse
# (checked with Claude Code 2.1.332); without it the PermissionRequest report stood until Stop
CLAUDE_EVENTS = ("UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure",
                 "PermissionRequest", "Notification", "Stop", "StopFailure", "SessionEnd")
CODEX_EVENTS = ("UserPromptSubmit", "PreToolUse", "PostToolUse", "PermissionRequest", "Stop")
WITH_MATCHER = {"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "BeforeTool"}
# Codex (0.171.0) runs inline hooks only once the user has trusted them: the first launch shows
# "Hooks need review" (pick "Trust all and continue"; the trust is kept in $CODEX_HOME/config.toml
# by hash of the hook, so it holds until our hook command changes). Setting this variable to 1
# skips the review with `--dangerously-bypass-hook-trust` instead, which applies to EVERY hook
# of that run, a repository's own .codex hooks included: for machines whose hooks are vetted.
CODEX_BYPASS_ENV = "AGENTSTATE_CODEX_BYPASS_HOOK_TRUST"
CODEX_BYPASS_FLAG = "--dangerously-bypass-hook-trust"


class LaunchError(Exception):
    pass


def hook_command(agent: str, event: str) -> str:
    # our own interpreter: the package is importable there; output and errors go nowhere
    return (f"{shlex.quote(sys.executable)} -m tmux_agentstate.hook {shlex.quote(agent)} "
            f"{shlex.quote(event)} 2>/dev/null || true")


def hooks_table(agent: str, events) -> dict:
    table = {}
    for event in events:
        entry = {"hooks": [{"type": "command", "command": hook_command(agent, event), "timeout": 5}]}
        if event in WITH_MATCHER:
            entry = {"matcher": "*", **entry}
        table[event] = [entry]
    return table


def _merge_hooks(settings: dict, ours: dict) -> dict:
    merged = dict(settings)
    hooks = dict(merged.get("hooks") or {})
    for event, entries in ours.items():
        hooks[event] = list(hooks.get(event) or []) + entries
    merged["hooks"] = hooks
    return merged


def _pop_option(args: list[str], name: str) -> tuple[list[str], str | None]:
    """Remove `--name VALUE` / `--name=VALUE` from args; returns (args, VALUE or None)."""
    out, value, i = [], None, 0
    while i < len(args):
        a = args[i]
        if a == "--":
            out.extend(args[i:])
            break
        if a == name and i + 1 < len(args):
            value = args[i + 1]
            i += 2
            continue
        if a.startswith(name + "="):
            value = a[len(name) + 1:]
            i += 1
            continue
        out.append(a)
        i += 1
    return out, value


def claude_args(args: list[str]) -> list[str]:
    """`--settings` is additive to the user's settings files, but the CLI takes one: merge
    ours into one the user passed (inline JSON or a file)."""
    rest, user = _pop_option(list(args), "--settings")
    settings: dict = {}
    if user is not None:
        try:
            text = user if user.lstrip().startswith("{") else open(os.path.expanduser(user)).read()
            settings = json.loads(text)
            if not isinstance(settings, dict):
                raise ValueError("not a JSON object")
        except (OSError, ValueError) as e:
            raise LaunchError(f"cannot read --settings {user!r}: {e}") from None
    merged = _merge_hooks(settings, hooks_table("claude", CLAUDE_EVENTS))
    return ["--settings", json.dumps(merged, separators=(",", ":"))] + rest


def _toml_value(value) -> str:
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}={_toml_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return json.dumps(value)  # a TOML basic string is a JSON string


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def codex_args(args: list[str], environ=None) -> list[str]:
    """Inline `[hooks]` tables through `-c` overrides (one per event; they add to, not replace,
    hooks.json files). A `-c` override also makes Codex run embedded (no shared app-server
    daemon for this session; it says so among its startup warnings)."""
    environ = os.environ if environ is None else environ
    extra = []
    for event, entries in hooks_table("codex", CODEX_EVENTS).items():
        extra += ["-c", f"hooks.{event}={_toml_value(entries)}"]
    if _truthy(environ.get(CODEX_BYPASS_ENV)) and CODEX_BYPASS_FLAG not in args:
        extra.append(CODEX_BYPASS_FLAG)
    return extra + list(args)


# Copilot CLI loads a plugin folder per run with `--plugin-dir` (repeatable, so the user's own
# still load); ours is package data whose hooks.json names the events report.py maps. Its hook
# commands are static text, so they find our interpreter through HOOK_PYTHON_ENV, which launch
# sets. Copilot's permissionRequest is not hooked: it fires before Copilot's own rules, for
# tools they then allow without asking; its notification hook says when a dialog is really up.
COPILOT_PLUGIN = Path(__file__).resolve().with_name("copilot_plugin")
HOOK_PYTHON_ENV = "AGENTSTATE_HOOK_PYTHON"


def copilot_args(args: list[str]) -> list[str]:
    if not (COPILOT_PLUGIN / "plugin.json").is_file():  # a broken install: start it as it is
        warn(f"{COPILOT_PLUGIN} is missing: copilot starts without its state plugin")
        return list(args)
    return ["--plugin-dir", str(COPILOT_PLUGIN)] + list(args)


def warn(line: str) -> None:
    print(f"tmux-agentstate launch: {line}", file=sys.stderr)


# opencode and Kilo load JS plugins named in their config; OPENCODE_CONFIG_CONTENT /
# KILO_CONFIG_CONTENT is one more config, merged over the user's files, so their own plugins
# and providers still load. One value only: a user's own is merged into, never replaced.
OPENCODE_PLUGIN = Path(__file__).resolve().with_name("opencode_plugin") / "agentstate.js"
CONFIG_CONTENT_ENV = {"opencode": "OPENCODE_CONFIG_CONTENT", "kilo": "KILO_CONFIG_CONTENT"}


def plugin_config_env(agent: str, environ=None) -> tuple[dict[str, str], str | None]:
    """({variable: value} to set, or {}; a one-line warning when the plugin cannot be added)."""
    environ = os.environ if environ is None else environ
    name = CONFIG_CONTENT_ENV[agent]
    if not OPENCODE_PLUGIN.is_file():  # the CLIs skip a missing plugin file without a word
        return {}, f"{OPENCODE_PLUGIN} is missing: {agent} starts without its state plugin"
    theirs = (environ.get(name) or "").strip()
    try:
        config = json.loads(theirs) if theirs else {}
    except ValueError:
        config = None
    plugins = config.get("plugin", []) if isinstance(config, dict) else None
    if not isinstance(plugins, list):
        return {}, (f"${name} is not a JSON object with a plugin list; {agent} starts with it as "
                    f"it is, without the state plugin")
    if str(OPENCODE_PLUGIN) not in plugins:
        plugins = plugins + [str(OPENCODE_PLUGIN)]
    return {name: json.dumps({**config, "plugin": plugins}, separators=(",", ":"))}, None


# pi (1.1.0 on) reports its own state with OSC 7501 (working / blocked with the dialog title / done /
# error / idle) only after the terminal answers its support query, which tmux never does;
# PI_PROGRAM_STATUS=1 makes it report without asking (0 turns reports off). A user's own value,
# whatever it is, is theirs; older pi releases ignore the variable.
PI_STATUS_ENV = "PI_PROGRAM_STATUS"


def pi_env(environ) -> dict[str, str]:
    """{PI_PROGRAM_STATUS: "1"} unless the user set the variable (to anything, even empty)."""
    return {} if PI_STATUS_ENV in environ else {PI_STATUS_ENV: "1"}


# Factory Droid takes Claude-style hooks in a "runtime settings file merged for this process
# only" (`--settings PATH`: a path, never inline JSON; checked with 0.215.0). Its settings files'
# hooks still run beside ours (~/.factory's and the project's). It fires no PermissionRequest:
# an approval or a question is a Notification. It prints each hook's run into its transcript
# unless the hook answers {"suppressOutput":true}, which report.py prints for droid.
DROID_EVENTS = ("UserPromptSubmit", "PreToolUse", "PostToolUse", "Notification", "Stop", "SessionEnd")


def droid_args(args: list[str], environ=None) -> list[str]:
    """`--settings OURS` first, ours being a private file holding the user's own `--settings`
    file (if they passed one) with our hooks added to theirs. Droid reads it again whenever it
    starts a session, so it stays until Droid has exited: a detached process removes it then
    (and each launch removes the ones left by launches that have ended). When we cannot read
    theirs or write ours, Droid starts with the user's arguments as they are, without our
    hooks, after one line saying why (Droid then says what it thinks of their file)."""
    environ = os.environ if environ is None else environ
    rest, user = _pop_option(list(args), "--settings")
    settings: dict = {}
    if user is not None:
        try:
            with open(os.path.expanduser(user), encoding="utf-8") as f:
                settings = json.load(f)
            if not isinstance(settings, dict):
                raise ValueError("not a JSON object")
            hooks = settings.get("hooks") or {}
            if not (isinstance(hooks, dict) and all(isinstance(v, list) for v in hooks.values())):
                raise ValueError("its hooks are not an object of lists")
        except (OSError, ValueError) as e:  # UnicodeDecodeError is a ValueError
            warn(f"cannot read --settings {user!r} ({_one_line(e)}): droid starts with it as it "
                 f"is, without its state hooks")
            return list(args)
    merged = _merge_hooks(settings, hooks_table("droid", DROID_EVENTS))
    try:
        path = write_launch_settings("droid", merged, environ)
    except OSError as e:
        warn(f"cannot write droid's launch settings ({_one_line(e)}): droid starts without its "
             f"state hooks")
        return list(args)
    remove_when_gone(os.getpid(), path)
    return ["--settings", str(path)] + rest


def _one_line(e: Exception) -> str:
    return " ".join(str(e).split()) or type(e).__name__


# Other agents (Gemini CLI reads hooks from settings files only; pi loads extensions with -e and
# gets only PI_PROGRAM_STATUS above; Cline's --hooks-dir is read by nothing in 3.0.65) are
# started as they are, with the identity hint: their screens and titles carry the state.
BUILDERS = {"claude": ("claude", claude_args), "codex": ("codex", codex_args),
            "copilot": ("copilot", copilot_args), "droid": ("droid", droid_args)}


def foreground_of(tty: str) -> bool:
    """Whether this process is in front on that terminal (its tty is ours, our group in front)."""
    try:  # by device, not by name: stdin may be the same terminal opened as /dev/tty
        return (os.isatty(0) and os.fstat(0).st_rdev == os.stat(tty).st_rdev
                and os.tcgetpgrp(0) == os.getpgrp())
    except OSError:
        return False


def claim_pane(environ) -> str | None:
    """Record a new launch on $TMUX_PANE; its token, or None when this launch does not own the
    pane: outside tmux, not the pane's foreground, or inside a tool call of the agent launched
    there (that one's pid, recorded on the pane, is above us)."""
    from .. import procs
    from ..core.origin import LAUNCH_OPTION, LaunchRecord
    from ..tmux import Tmux, TmuxError
    pane = environ.get("TMUX_PANE") or ""
    if not environ.get("TMUX") or not pane.startswith("%"):
        return None
    tmux = Tmux(socket_path=environ["TMUX"].split(",")[0])
    try:
        out = tmux.run(["display-message", "-p", "-t", pane, f"#{{pane_tty}} #{{{LAUNCH_OPTION}}}"])
        tty, _, recorded = (out[0] if out else "").partition(" ")
        if not foreground_of(tty):
            return None
        owner = LaunchRecord.parse(recorded)
        if owner is not None and owner.pid in procs.ancestors():
            return None
        token = secrets.token_hex(16)
        tmux.run(["set-option", "-p", "-t", pane, LAUNCH_OPTION, str(LaunchRecord(token, os.getpid()))])
        return token
    except TmuxError as e:
        warn(f"cannot record this launch on {pane} ({e}); its reports will be ignored")
        return None


def origin_env(environ) -> dict[str, str | None]:
    """The proof-of-origin variables for the agent (None: unset an inherited one)."""
    from ..core.origin import HOST_PID_ENV, LAUNCH_PID_ENV, TOKEN_ENV
    token = claim_pane(environ)
    if token is None:
        return {TOKEN_ENV: None, LAUNCH_PID_ENV: None, HOST_PID_ENV: None}
    return {TOKEN_ENV: token, LAUNCH_PID_ENV: str(os.getpid()), HOST_PID_ENV: None}


def launch(agent: str, args: list[str], status_shim: bool = False) -> NoReturn:
    program, build = BUILDERS.get(agent, (agent, lambda a: list(a)))
    exe = shutil.which(program)
    if exe is None:
        raise LaunchError(f"{program!r} is not on PATH")
    argv = [program, *build(args)]
    env = dict(os.environ, AGENTSTATE_AGENT=agent, **{HOOK_PYTHON_ENV: sys.executable})
    for name, value in origin_env(os.environ).items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    if agent == "pi":
        env.update(pi_env(os.environ))
    if agent in CONFIG_CONTENT_ENV:
        extra, warning = plugin_config_env(agent)
        env.update(extra)
        if warning:
            warn(warning)
    sys.stdout.flush()
    sys.stderr.flush()
    if status_shim:
        shimmed = shim_argv(exe, argv, env)
        if shimmed is not None:
            os.execve(sys.executable, shimmed, env)
    os.execvpe(exe, argv, env)


def shim_argv(exe: str, argv: list[str], env: dict) -> list[str] | None:
    """`--status-shim`: the command line that runs the agent behind our pty shim
    (hooks/status_shim.py), `env` marked for it; None (with a warning) when it cannot be used:
    the shim needs the pane's terminal on stdin and stdout."""
    from .status_shim import SHIM_ENV
    if not env.get("TMUX"):  # a terminal outside tmux may answer the query itself (and nothing
        warn("--status-shim is for tmux panes: started without it")  # of ours reads there)
        return None
    if not (os.isatty(0) and os.isatty(1)):
        warn("--status-shim needs a terminal on stdin and stdout: started without it")
        return None
    env[SHIM_ENV] = "1"
    return [sys.executable, "-m", "tmux_agentstate.hooks.status_shim", exe, *argv]
