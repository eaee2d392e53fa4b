"""Command line: `tmux-agentstate COMMAND ...`, one module per group of commands:

    classify.py  replay captured bytes and classify them (no tmux)
    sidecar.py   watch, start, stop, status
    panes.py     list, popup, next, explain, send, answer, report
    agents.py    hook, launch
    record.py    record
    hosts.py     hosts (remote hosts' links)
    doctor.py    doctor
    manifests.py manifests list, manifests update
    stream.py    stream (what a sidecar on another machine reads over ssh)
    common.py    errors, exit codes, the server named by -L/-S, printing (controls escaped)

Every failure the user can cause (a missing file, an unknown agent, a broken manifest) is one
line on stderr and a non-zero exit, never a traceback.
"""
from __future__ import annotations

import argparse

from . import (agents, classify, doctor, hosts, manifests, panes, record, sidecar, stream,
               tmux_init)
from .common import EXIT_FAIL, CliError, add_top_server, err, merge_server, need_server, prune_ended_servers


def version() -> str:
    """The installed distribution's version; the package's own when run from a checkout."""
    from importlib import metadata
    try:
        return metadata.version("tmux-agentstate")
    except metadata.PackageNotFoundError:
        from .. import __version__
        return __version__


class _Version(argparse.Action):
    """--version, looked up only when asked (importlib.metadata scans the installed packages:
    not on every hook's start)."""

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"tmux-agentstate {version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tmux-agentstate",
                                description="Is the coding agent in each tmux pane working, idle, "
                                            "or blocked waiting on you?",
                                epilog="examples:\n  tmux-agentstate list\n"
                                       "  tmux-agentstate -L work explain %3\n"
                                       "  tmux-agentstate COMMAND --help",
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action=_Version, nargs=0, help="show the version and exit")
    add_top_server(p)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in (classify, sidecar, agents, panes, hosts, record, doctor, manifests, tmux_init,
                  stream):
        group.add(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    problem = merge_server(args)
    if problem:
        parser.error(problem)
    prune_ended_servers(args)
    try:
        need_server(args)
        return args.func(args)
    except CliError as e:
        err(str(e))
        return EXIT_FAIL
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_FAIL
