"""Why a host's link ended, in one line that says what to do: from ssh's exit code and its
last lines on stderr (OpenSSH's own words), or from a first line that is another schema's
hello. Pure."""
from __future__ import annotations

import json

from ...core import hostproto
from ...core.hostproto import clean_text

# OpenSSH's words for a host it could not reach (connect, resolve, route, keepalive)
UNREACHABLE = ("Could not resolve hostname", "Connection refused", "Connection timed out",
               "No route to host", "Network is unreachable", "not responding",
               "Connection reset", "Connection closed", "Broken pipe",
               "timed out during banner exchange")
MISSING = ("command not found", "No such file or directory", "not found")


def _said(tail: list[str], *words: str) -> str | None:
    """The last of ssh's lines holding any of `words`."""
    for line in reversed(tail):
        if any(w in line for w in words):
            return line
    return None


def ended_why(dest: str, code: int | None, tail: list[str], was_connected: bool) -> tuple[str, str]:
    """(status, why) for a session that ended: `error` for what only the user can mend,
    `stale` for what may pass (the host away, the connection dropped)."""
    if _said(tail, "Host key verification failed", "No ED25519 host key", "host key is known"):
        if _said(tail, "REMOTE HOST IDENTIFICATION HAS CHANGED"):
            return "error", (f"host key of {dest} changed: if that is expected, remove the old "
                             f"one (ssh-keygen -R) and connect once with ssh {dest}")
        return "error", f"host key unknown: connect once with ssh {dest} and accept it"
    denied = _said(tail, "Permission denied", "Too many authentication failures")
    if denied:
        return "error", (f"auth refused by {dest} ({denied}): a key or agent must log in "
                         f"without a prompt (ssh -o BatchMode=yes {dest} true)")
    if _said(tail, "invalid choice: 'stream'", "invalid choice: \"stream\""):
        return "error", (f"{dest} runs an older tmux-agentstate without the stream this one "
                         "reads; upgrade it")
    if code == 127 or (code not in (0, 255) and _said(tail, *MISSING)):
        return "error", (f"tmux-agentstate not found on {dest}: install it there or set "
                         "@agentstate-remote-command")
    unreachable = _said(tail, *UNREACHABLE)
    if code == 255 or unreachable:
        line = unreachable or (tail[-1] if tail else "ssh ended (exit 255)")
        return "stale", f"{dest} unreachable: {line}"
    last = f": {tail[-1]}" if tail else ""
    return ("stale" if was_connected else "error"), (
        f"the stream on {dest} ended (exit {code if code is not None else '?'}){last}")


def old_version_why(dest: str, line: bytes) -> str | None:
    """A first line that is a hello of another schema: which side to upgrade, in one line."""
    if len(line) > hostproto.MAX_LINE:
        return None
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or message.get("t") != "hello":
        return None
    schema = message.get("v")
    if schema == hostproto.SCHEMA:
        return None
    version = clean_text(message.get("version"), 40) or "of unknown version"
    if isinstance(schema, int) and not isinstance(schema, bool) and schema > hostproto.SCHEMA:
        return (f"{dest} runs tmux-agentstate {version}, whose stream (schema {schema}) this "
                f"one (schema {hostproto.SCHEMA}) cannot read; upgrade this one")
    return (f"{dest} runs tmux-agentstate {version} without the stream this one reads; "
            "upgrade it")


def destination_problem(dest: str) -> str:
    """Why `dest` cannot be an ssh destination ("" when it can): one ssh would read as an
    option (-oProxyCommand=...), or with a space or control character in it."""
    if not dest:
        return "an empty destination"
    if dest.startswith("-"):
        return f"{hostproto.clean_text(dest, 60)!r} starts with '-' (ssh would read an option)"
    if not dest.isprintable() or any(c.isspace() for c in dest):
        return f"{hostproto.clean_text(dest, 60)!r} holds a space or control character"
    return ""
