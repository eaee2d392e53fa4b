"""The adapter's errors: a command tmux refused, and no server at all."""
from __future__ import annotations

# what a tmux client says when there is no server: none was running, its socket is gone, or
# it ended while the client was connected (a kill-server racing our command)
_SERVER_GONE = ("no server running", "error connecting", "No such file", "server exited",
                "lost server")


class TmuxError(RuntimeError):
    pass


class ServerGone(TmuxError):
    """The tmux server is not running (any more)."""
