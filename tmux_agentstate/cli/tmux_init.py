"""`tmux-init`: the whole plugin for a pip/pipx install (no plugin folder, no TPM). One line in
tmux.conf, `run-shell 'tmux-agentstate tmux-init'`, wires what plugin.tmux wires (the same
script, tmux_agentstate/plugin/wire: placeholders, a default segment, the keys, the hooks),
with keys and hooks running this interpreter, then starts the sidecar. Running it again
changes nothing.

The keys and hooks call it back with a mode, as plugin.tmux's call `plugin/ensure`: `--auto` (a
hook: start the sidecar unless stopped on purpose), `--popup CLIENT`, `--next CLIENT`. Those
print nothing and exit 0, so no run-shell error view covers a pane; what goes wrong is said in
the status segment and as a message."""
from __future__ import annotations

import os
import subprocess
import sys

from .common import CliError, add_server, command, tmux_for

EXAMPLE = "in tmux.conf: run-shell 'tmux-agentstate tmux-init'"


def add(sub) -> None:
    w = command(sub, "tmux-init", "wire keys, hooks and the status segment into tmux for a "
                "pip/pipx install (what the TPM plugin wires), then start the sidecar; harmless "
                "to run again; in tmux.conf: run-shell 'tmux-agentstate tmux-init'",
                "tmux-agentstate tmux-init", "tmux-agentstate tmux-init -L work")
    add_server(w)
    mode = w.add_mutually_exclusive_group()
    mode.add_argument("--load", dest="mode", action="store_const", const="load",
                      help="only start the sidecar (what tmux-init does after wiring)")
    mode.add_argument("--auto", dest="mode", action="store_const", const="auto",
                      help="as our hooks run it: start the sidecar unless stopped on purpose")
    mode.add_argument("--popup", metavar="CLIENT", help="as prefix + A runs it: the agent list")
    mode.add_argument("--next", metavar="CLIENT", help="as prefix + a runs it: the next agent")
    w.set_defaults(func=cmd_tmux_init)


def cmd_tmux_init(args) -> int:
    from ..plugin.wiring import WIRE
    from ..tmux import TmuxError
    tmux = tmux_for(args)
    try:
        socket = tmux.socket()
    except TmuxError as e:
        raise CliError(f"no tmux server at {tmux.label}: {e} ({EXAMPLE})") from None
    if args.popup or args.next or args.mode:
        return _called_back(args, tmux, socket)
    wired = subprocess.run(["bash", str(WIRE), socket, sys.executable, "-m", "tmux_agentstate",
                            "tmux-init"], capture_output=True, text=True)
    if wired.returncode != 0:
        raise CliError(f"wiring tmux failed: {(wired.stderr or '').strip()[:300]}")
    # the sidecar starts in the background: tmux.conf's run-shell waits for this command, and
    # at the server's start there may be no session to watch yet (the session-created hook
    # starts it then)
    subprocess.Popen([sys.executable, "-m", "tmux_agentstate", "tmux-init", "--load", "-S", socket],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, cwd="/", start_new_session=True)
    if sys.stdout.isatty():
        print(f"tmux-agentstate: wired {socket}; starting the sidecar")
    return 0


def _called_back(args, tmux, socket: str) -> int:
    """A key or hook: silent, exit 0; failures said on the status line and to the client."""
    import argparse
    import shlex

    from . import panes, sidecar
    from ..tmux import TmuxError, tmux_quote
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    try:
        if args.popup:
            command = " ".join(shlex.quote(a) for a in (sys.executable, "-m", "tmux_agentstate",
                                                         "popup", "-S", socket,
                                                         "--client", args.popup))
            try:
                tmux.run(["display-popup", "-c", args.popup, "-E", "-w", "90%", "-h", "60%",
                          "-T", " agents ", command])
            except TmuxError:  # display-popup came with tmux 3.2
                tmux.run(["display-message", "-c", args.popup, "tmux-agentstate: the agent list "
                          "needs tmux 3.2+ (display-popup); run: tmux-agentstate list"])
        elif args.next:
            panes.cmd_next(argparse.Namespace(S=socket, L=None, client=args.next))
        else:
            # a load replaces a sidecar from another install, as plugin/ensure's `start --replace`
            start = argparse.Namespace(S=socket, L=None, auto=args.mode == "auto",
                                       replace=args.mode == "load", interval=None, intake=None)
            try:
                sidecar.cmd_start(start)
            except CliError as e:
                sidecar._say_in_segment(tmux, str(e))
                sidecar._tell_clients(tmux, tmux_quote(f"tmux-agentstate: {e}"))
    except Exception as e:  # noqa: BLE001  a key or hook shows no traceback, no error view
        client = args.popup or args.next
        try:
            if client:
                tmux.run(["display-message", "-c", client, tmux_quote(f"tmux-agentstate: {e}")])
        except (TmuxError, OSError):
            pass
    return 0

