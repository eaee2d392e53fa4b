"""`record`: a pane's raw output bytes into a file (a new fixture)."""
from __future__ import annotations

import sys
from pathlib import Path

from .common import CliError, add_server, command, say, tmux_for


def add(sub) -> None:
    r = command(sub, "record", "save a pane's raw output bytes into FILE (a new fixture)",
                "tmux-agentstate record %3 claude-trust.raw --seconds 30")
    add_server(r)
    r.add_argument("pane", metavar="PANE", help="target pane (%%3, session:window.pane)")
    r.add_argument("file", metavar="FILE")
    r.add_argument("--seconds", type=float, help="stop after this long (default: Ctrl-C)")
    r.add_argument("--no-seed", action="store_true",
                   help="only what the pane prints from now on, not the screen it shows now")
    r.set_defaults(func=cmd_record)


def cmd_record(args) -> int:
    """A pane's raw output bytes into FILE (see panes/record.py), until Ctrl-C, --seconds, or the
    pane is gone."""
    import shlex
    import signal
    import time

    from ..panes import record
    from ..tmux import TmuxError
    try:
        rec = record.start(tmux_for(args), args.pane, Path(args.file), seed=not args.no_seed)
        info, out = rec.info, rec.out
        stop = []
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.append(1))
        say(f"recording {info.pane_id} ({info.address}, {info.height}x{info.width}) into {out}; "
              "Ctrl-C stops", file=sys.stderr)
        deadline = time.monotonic() + args.seconds if args.seconds else None
        while not stop and (deadline is None or time.monotonic() < deadline):
            time.sleep(0.2)
            if not rec.alive():
                break  # the pane is gone, and its pipe with it
        else:
            rec.stop()
    except (TmuxError, record.RecordError) as e:
        raise CliError(str(e)) from None
    time.sleep(0.1)  # the pipe's last bytes
    say(f"recorded {out.stat().st_size} bytes of {info.pane_id} into {out}; replay with: "
          f"tmux-agentstate classify --size {info.height}x{info.width} {shlex.quote(str(out))}")
    return 0
