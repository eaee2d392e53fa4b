"""The tmux adapter: the only code that talks to tmux.

    server.py   Tmux: one server, the commands run on it
    reading.py  panes, screens, clients read from it
    objects.py  PaneInfo, PaneView, ClientInfo, Batch, and their formats
    control.py  the control-mode client the sidecar runs its commands through
    errors.py   TmuxError, ServerGone

One-off commands go through libtmux's `Server.cmd`, batched: tmux takes a lone `;` argument
as a command separator, so one tmux process runs a whole list of commands (50 separate calls
cost ~300–600 ms; one batched call ~10 ms). The sidecar, which calls several times a second,
goes further and keeps one control-mode client (`ControlClient`), so a sweep costs a write and
a read instead of a tmux process (~4 ms of CPU each).
"""
from .errors import ServerGone, TmuxError
from .objects import Batch, ClientInfo, PaneInfo, PaneView, cat_into, tmux_quote
from .server import Tmux, default_socket_path, listening

__all__ = ["Batch", "ClientInfo", "PaneInfo", "PaneView", "ServerGone", "Tmux", "TmuxError",
           "cat_into", "default_socket_path", "listening", "tmux_quote"]
