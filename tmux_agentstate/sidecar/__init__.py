"""The sidecar: one per tmux server, in its own process. Its files, in the order of the flow:

    intakes/    how the screens of the watched panes come (pipe, emulate, capture)
    watch.py    what is kept about one watched pane
    loop.py     the loop: identify panes, wait, classify, sweep
    publish.py  pane/window/global options, notifications, the status file
    manifests.py  hot reload of the rules
    fifos.py    the FIFOs `pipe-pane` writes into
    identity.py which agent runs in each pane (through the process adapter)
    notify.py   when to tell the user, and how (bell, message, a command of theirs)
    config.py   its settings: the `@agentstate-*` options, with their defaults
    runtime.py  its private folder: FIFOs, lock, log, status
    folder.py   where that folder is (light: a hook imports it)
    doorbell.py how a hook report wakes it at once (a FIFO; `ring` for the hook)
    rings.py    what the loop does when the doorbell rings: read, classify, publish those panes
    sessions.py Claude Code's session files watched: a change rings the doorbell
    install.py  what it runs from; hands over to a new install that replaced it (an update)
"""

__all__ = ["Sidecar"]


def __getattr__(name: str):
    # the loop (libtmux, the core, watchdog…) is imported only when asked for: a hook imports
    # `sidecar.doorbell` and `sidecar.runtime` and must stay light (`python -X importtime`)
    if name == "Sidecar":
        from .loop import Sidecar
        return Sidecar
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
