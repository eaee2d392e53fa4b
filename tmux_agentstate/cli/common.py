"""What every command shares: errors as one line, exit codes, the tmux server named by -L/-S,
its runtime folder."""
from __future__ import annotations

import argparse
import re
import sys

EXIT_USAGE = 2
EXIT_FAIL = 1
EXIT_REFUSED = 3


class CliError(Exception):
    """A user-facing error: printed as one line, exit non-zero."""


def size(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"(\d+)x(\d+)", text.strip())
    if not m or not (2 <= int(m.group(1)) <= 1000 and 2 <= int(m.group(2)) <= 1000):
        raise argparse.ArgumentTypeError(f"size must be ROWSxCOLS, e.g. 32x120 (got {text!r})")
    return int(m.group(1)), int(m.group(2))


def err(msg: str) -> None:
    print(f"tmux-agentstate: {msg}", file=sys.stderr)


def tmux_for(args):
    from ..tmux import Tmux
    return Tmux(socket_name=getattr(args, "L", None), socket_path=getattr(args, "S", None))


def runtime_for(tmux):
    from ..sidecar.runtime import Runtime
    from ..tmux import TmuxError
    try:
        socket = tmux.socket()
    except TmuxError as e:
        raise CliError(f"no tmux server at {tmux.label}: {e}") from None
    try:
        return Runtime(socket).ensure()
    except OSError as e:  # e.g. a folder of that name that belongs to another user
        raise CliError(f"cannot use the runtime folder: {e}") from None


def prune_ended_servers(args) -> None:
    """What every command does first: the runtime folders of servers that have ended go (a
    sidecar that was stopped, or killed, could not remove its own)."""
    from ..sidecar.runtime import prune_everywhere
    try:
        prune_everywhere(getattr(args, "S", None))
    except OSError:
        pass


def server_args(args) -> list[str]:
    if getattr(args, "S", None):
        return ["-S", args.S]
    if getattr(args, "L", None):
        return ["-L", args.L]
    return []


def add_server(p) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("-L", metavar="NAME", help="tmux socket name (as tmux -L)")
    g.add_argument("-S", metavar="PATH", help="tmux socket path (as tmux -S)")
