"""Command line: `tmux-agentstate COMMAND ...`, one module per group of commands:

    classify.py  replay captured bytes and classify them (no tmux)
    sidecar.py   watch, start, stop, status
    panes.py     list, popup, next, explain, send, answer, report
    agents.py    hook, launch
    record.py    record
    doctor.py    doctor
    manifests.py manifests list, manifests update
    common.py    errors, exit codes, the server named by -L/-S

Every failure the user can cause (a missing file, an unknown agent, a broken manifest) is one
line on stderr and a non-zero exit, never a traceback.
"""
from __future__ import annotations

import argparse

from . import agents, classify, doctor, manifests, panes, record, sidecar
from .common import EXIT_FAIL, CliError, err, prune_ended_servers


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tmux-agentstate",
                                description="Is the coding agent in each tmux pane working, idle, "
                                            "or blocked waiting on you?")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in (classify, sidecar, agents, panes, record, doctor, manifests):
        group.add(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    prune_ended_servers(args)
    try:
        return args.func(args)
    except CliError as e:
        err(str(e))
        return EXIT_FAIL
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_FAIL
