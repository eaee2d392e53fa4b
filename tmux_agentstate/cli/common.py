"""What every command shares: errors as one line, exit codes, the tmux server named by -L/-S,
its runtime folder, and printing that never lets a control character reach the terminal."""
from __future__ import annotations

import argparse
import json
import os
import re
import sys

EXIT_USAGE = 2
EXIT_FAIL = 1
EXIT_REFUSED = 3

# C0 controls (but newline, which `say` splits on), DEL, C1 controls, and the lone surrogates
# `surrogateescape` makes of bytes that are not UTF-8 (printing one raises)
_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
_JSON_UNSAFE = re.compile("[\x7f-\x9f\ud800-\udfff]")  # json.dumps leaves these raw


def _escaped(m: re.Match) -> str:
    c = ord(m.group())
    if 0xDC80 <= c <= 0xDCFF:  # a byte that was not UTF-8
        return f"\\x{c - 0xDC00:02x}"
    return f"\\x{c:02x}" if c <= 0xFF else f"\\u{c:04x}"


def safe(text: object) -> str:
    """`text` fit for a terminal: every control character (ESC, BEL, CSI, …; newlines too)
    shown as `\\xNN`. Pane text, titles, agent names, details and file names go through this
    (or `say`) before any print: they may come from whatever runs in a pane."""
    return _CONTROL.sub(_escaped, str(text)).replace("\n", "\\x0a")


def say(text: object = "", file=None) -> None:
    """Print `text`, its own line breaks kept, every other control character escaped."""
    print("\n".join(_CONTROL.sub(_escaped, line) for line in str(text).split("\n")),
          file=file or sys.stdout)


def safe_json(obj, **kw) -> str:
    """`json.dumps` of `obj` with DEL, C1 controls and lone surrogates escaped too (JSON asks
    only C0 to be; a terminal reads C1 as controls)."""
    text = json.dumps(obj, ensure_ascii=False, **kw)
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class CliError(Exception):
    """A user-facing error: printed as one line, exit non-zero."""


def size(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"(\d+)x(\d+)", text.strip())
    if not m or not (2 <= int(m.group(1)) <= 1000 and 2 <= int(m.group(2)) <= 1000):
        raise argparse.ArgumentTypeError(f"size must be ROWSxCOLS, e.g. 32x120 (got {text!r})")
    return int(m.group(1)), int(m.group(2))


def err(msg: str) -> None:
    """One line on stderr, whatever the message quotes (a newline in pane text too)."""
    print(f"tmux-agentstate: {safe(msg)}", file=sys.stderr)


def command(sub, name: str, purpose: str, *examples: str, **kw) -> argparse.ArgumentParser:
    """A subcommand whose --help starts with its one-line purpose and ends with examples."""
    return sub.add_parser(name, help=purpose, description=purpose[:1].upper() + purpose[1:] + ".",
                          epilog="examples:\n" + "\n".join(f"  {e}" for e in examples),
                          formatter_class=argparse.RawDescriptionHelpFormatter, **kw)


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


SERVER_HELP = {"L": "tmux socket name (as tmux -L)", "S": "tmux socket path (as tmux -S)"}


def add_server(p) -> None:
    """-L/-S on a command that talks to tmux (also accepted before the command: see
    `merge_server`)."""
    g = p.add_mutually_exclusive_group()
    g.add_argument("-L", metavar="NAME", help=SERVER_HELP["L"])
    g.add_argument("-S", metavar="PATH", help=SERVER_HELP["S"])


def add_top_server(p) -> None:
    """-L/-S before the command (`tmux-agentstate -L x list`), kept apart until merged."""
    g = p.add_mutually_exclusive_group()
    g.add_argument("-L", metavar="NAME", dest="top_L", help=SERVER_HELP["L"])
    g.add_argument("-S", metavar="PATH", dest="top_S", help=SERVER_HELP["S"])


def merge_server(args) -> str | None:
    """Fold -L/-S given before the command into the command's own; a usage error or None."""
    top = {k: getattr(args, f"top_{k}", None) for k in ("L", "S")}
    if not any(top.values()):
        return None
    if not hasattr(args, "L"):
        return f"'{args.command}' does not talk to tmux: -L/-S are not for it"
    given = {k: getattr(args, k) for k in ("L", "S") if getattr(args, k)}
    given.update({k: v for k, v in top.items() if v and k not in given})
    if len(given) > 1:
        return "-L and -S name two servers: give one"
    for k in ("L", "S"):
        if top[k] and getattr(args, k) and getattr(args, k) != top[k]:
            return f"-{k} given twice ({top[k]!r} and {getattr(args, k)!r}): give one"
    args.L, args.S = given.get("L"), given.get("S")
    return None


def need_server(args) -> None:
    """A command that talks to tmux, with no server to talk to: one line on what to do. Outside
    tmux with no server named, tmux's default server is used when it runs (as tmux does)."""
    if not hasattr(args, "L") or getattr(args, "outside_tmux_ok", False):
        return
    from ..tmux import default_socket_path, listening
    if args.S:
        if not listening(args.S):
            raise CliError(f"no tmux server at {args.S}: start one with tmux -S {args.S}, or "
                           "name a running one with -S PATH / -L NAME")
    elif args.L:
        path = os.path.join(os.path.dirname(default_socket_path()), args.L)
        if "/" not in args.L and not listening(path):
            raise CliError(f"no tmux server named {args.L!r} (at {path}): start one with tmux -L "
                           f"{args.L}, or name a running one with -L NAME / -S PATH")
    elif os.environ.get("TMUX"):
        path = os.environ["TMUX"].split(",")[0]
        if not listening(path):  # a shell that outlived its tmux server, say
            raise CliError(f"$TMUX names {path}, where no tmux server runs now: run this in a "
                           "live tmux, or name a server with -L NAME / -S PATH")
    else:
        path = default_socket_path()
        if not listening(path):
            raise CliError(f"not inside tmux and no tmux server at {path}: run this inside "
                           "tmux, or name a server with -L NAME / -S PATH")
