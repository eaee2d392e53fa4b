"""Command line: `tmux-agentstate SUBCOMMAND ...`.

Every failure the user can cause (a missing file, an unknown agent, a broken manifest) is one
line on stderr and a non-zero exit, never a traceback.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

EXIT_USAGE = 2
EXIT_FAIL = 1


class CliError(Exception):
    """A user-facing error: printed as one line, exit non-zero."""


def _size(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"(\d+)x(\d+)", text.strip())
    if not m or not (2 <= int(m.group(1)) <= 1000 and 2 <= int(m.group(2)) <= 1000):
        raise argparse.ArgumentTypeError(f"size must be ROWSxCOLS, e.g. 32x120 (got {text!r})")
    return int(m.group(1)), int(m.group(2))


def _err(msg: str) -> None:
    print(f"tmux-agentstate: {msg}", file=sys.stderr)


# -- classify --------------------------------------------------------------------------------------
def cmd_classify(args) -> int:
    from .catalog import Catalog
    from .screen import replay

    catalog = Catalog()
    status = 0
    for e in catalog.errors:
        _err(f"manifest error: {e}")
        status = EXIT_FAIL
    manifest = None
    if args.agent:
        manifest = catalog.get(args.agent)
        if manifest is None:
            _err(f"unknown agent {args.agent!r} (known: {', '.join(catalog.names()) or 'none'})")
            return EXIT_FAIL
    rows, cols = args.size
    for name in args.files:
        path = Path(name)
        try:
            data = path.read_bytes()
        except OSError as e:
            _err(f"{name}: cannot read: {e.strerror or e}")
            status = EXIT_FAIL
            continue
        if not data:
            _err(f"{name}: empty capture, nothing to classify")
            status = EXIT_FAIL
            continue
        screen = replay(data, rows, cols)
        bad = screen.invalid_utf8
        if bad > 16 and bad * 50 > len(data):
            _err(f"{name}: not terminal output ({bad} invalid UTF-8 sequences in {len(data)} bytes)")
            status = EXIT_FAIL
            continue
        if screen.truncated_tail:
            _err(f"{name}: warning: capture ends inside a UTF-8 sequence (read as U+FFFD)")
            status = EXIT_FAIL
        view = screen.view()
        m = manifest or catalog.infer(view)
        if m is None:
            _err(f"{name}: cannot tell which agent drew this screen; pass --agent "
                 f"({', '.join(catalog.names())})")
            status = EXIT_FAIL
            continue
        match = m.evaluate(view)
        if args.json:
            print(json.dumps({"file": name, "agent": m.name, "state": match.state,
                              "rule": match.rule, "line": match.line}, ensure_ascii=False))
        else:
            detail = f" [{match.rule}] {match.line.strip()}" if match.rule else " [no rule: fallback]"
            print(f"{name}: {m.name} {match.state}{detail}")
    return status


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tmux-agentstate",
                                description="Is the coding agent in each tmux pane working, idle, "
                                            "or blocked waiting on you?")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    c = sub.add_parser("classify", help="replay raw captured bytes into a screen and classify it")
    c.add_argument("--agent", help="manifest name (default: inferred from the screen)")
    c.add_argument("--size", type=_size, default=(32, 120), metavar="ROWSxCOLS",
                   help="emulated screen size (default 32x120)")
    c.add_argument("--json", action="store_true", help="one JSON object per file")
    c.add_argument("files", nargs="+", metavar="FILE")
    c.set_defaults(func=cmd_classify)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except CliError as e:
        _err(str(e))
        return EXIT_FAIL
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_FAIL
