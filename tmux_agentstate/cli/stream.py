"""`stream`: what another machine's sidecar runs on this host over SSH (not for people): this
host's agent panes as a stream of JSON lines (panes/stream.py, core/hostproto.py)."""
from __future__ import annotations

from .common import add_server, command, server_args, tmux_for


def add(sub) -> None:
    s = command(sub, "stream", "this host's agent panes as JSON lines, for a sidecar that "
                "links to it over ssh (@agentstate-hosts)",
                "ssh HOST tmux-agentstate stream")
    add_server(s)
    # no tmux server on the host is no error: the stream says so and waits for one
    s.set_defaults(func=cmd_stream, outside_tmux_ok=True)


def cmd_stream(args) -> int:
    from . import version
    from ..panes.stream import run_stream
    return run_stream(tmux_for(args), version(), server_args(args))
