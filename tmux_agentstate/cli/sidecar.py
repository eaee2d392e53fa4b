"""The sidecar's commands: `watch` (in the foreground), `start` (in the background, as the
plugin's hooks run it), `stop`, `status`."""
from __future__ import annotations

import argparse
import os
import sys

from ..sidecar.config import INTAKES
from .common import CliError, add_server, command, runtime_for, say, server_args, tmux_for

EXAMPLES = {
    "watch": ("tmux-agentstate watch -v", "tmux-agentstate watch -L work --interval 0.5"),
    "start": ("tmux-agentstate start", "tmux-agentstate start -L work"),
    "stop": ("tmux-agentstate stop", "tmux-agentstate stop --clean"),
    "status": ("tmux-agentstate status", "tmux-agentstate status -S /tmp/tmux-1000/work"),
}


def add(sub) -> None:
    for name, func, text in (("watch", cmd_watch, "run the sidecar in the foreground"),
                             ("start", cmd_start, "start the sidecar in the background (idempotent)")):
        w = command(sub, name, text, *EXAMPLES[name])
        add_server(w)
        w.add_argument("--interval", type=float, help="sweep interval in seconds (default 0.7)")
        w.add_argument("--intake", choices=INTAKES,
                       help="emulate (default): parse a pane's bytes (pipe-pane) ourselves; pipe: "
                            "read tmux's rendering of a pane when its bytes say it changed; "
                            "capture: read every agent pane each tick")
        if name == "start":
            w.add_argument("--auto", action="store_true",
                           help="as our tmux hooks run it: silent; leaves a sidecar stopped on "
                                "purpose stopped, and one that keeps dying down")
            w.add_argument("--replace", action="store_true",
                           help="as the plugin runs it when loaded: a running sidecar from "
                                "another install (before an update, say) is stopped and this "
                                "install's started")
        if name == "watch":
            w.add_argument("--quiet", action="store_true", help="exit 0 if one already runs")
            w.add_argument("-v", "--verbose", action="store_true", help="log to stderr too")
            # for tests and benchmarks only (what must work without the pane listing): list
            # the panes from tmux at least this often, in seconds (default 5)
            w.add_argument("--listing-every", type=float, help=argparse.SUPPRESS)
        w.set_defaults(func=func)
    for name, func, text in (("stop", cmd_stop, "stop the background sidecar"),
                             ("status", cmd_status, "say whether a sidecar runs and what it watches")):
        w = command(sub, name, text, *EXAMPLES[name])
        add_server(w)
        if name == "stop":
            w.add_argument("--clean", action="store_true",
                           help="also take out our hooks, key binding, options and placeholders")
        w.set_defaults(func=func)


def cmd_watch(args) -> int:
    import logging
    from logging.handlers import RotatingFileHandler

    from ..sidecar.config import Config
    from ..sidecar import Sidecar
    tmux = tmux_for(args)
    runtime = runtime_for(tmux)
    if not runtime.acquire():
        pid = runtime.running_pid()
        if args.quiet:
            return 0
        raise CliError(f"a sidecar already watches {runtime.socket_path} (pid {pid})")
    logging.raiseExceptions = False  # a log line a full disk refuses is lost, not a traceback
    handler = RotatingFileHandler(runtime.log_path, maxBytes=1 << 20, backupCount=1)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    root = logging.getLogger("tmux_agentstate")
    root.setLevel(logging.DEBUG if args.verbose else logging.INFO)
    root.addHandler(handler)
    if args.verbose:
        root.addHandler(logging.StreamHandler())
    options = tmux.global_options()
    if args.intake:
        options["@agentstate-intake"] = args.intake
    config = Config.from_tmux(options, args.interval)
    if args.listing_every and args.listing_every > 0:
        config.listing_every = args.listing_every
    _tell_option_problems(tmux, runtime, config.problems)
    root.info("watching %s every %.2fs by %s (pid %d)", runtime.socket_path, config.interval,
              config.intake, os.getpid())
    Sidecar(tmux, runtime, config=config).run()
    return 0


def _tell_option_problems(tmux, runtime, problems) -> None:
    """Options the sidecar could not use (it runs with their defaults): each logged, and one
    line to every client attached now, once per start (`doctor` lists each with its fix). With
    no client attached (a server started at boot), the first to attach is told (_tell_untold)."""
    import logging

    from ..tmux import tmux_quote
    runtime.untold_path.unlink(missing_ok=True)
    if not problems:
        return
    log = logging.getLogger("tmux_agentstate.sidecar")
    for problem in problems:
        log.warning("option %s", problem.line())
    text = ("tmux-agentstate: option(s) not used: " + "; ".join(p.short() for p in problems)
            + "; see tmux-agentstate doctor")
    text = tmux_quote(" ".join("".join(c if c.isprintable() else " " for c in text).split()))
    if not _tell_clients(tmux, text):
        runtime.untold_path.write_text(text)


def _tell_clients(tmux, text: str) -> bool:
    """`text` (a tmux format) as a message to every attached client; whether one was."""
    from ..tmux import TmuxError
    try:
        clients = [c.name for c in tmux.clients() if not c.control]
        if clients:  # one round trip for all of them
            tmux.run(*[["display-message", "-c", name, "-d", "10000", text] for name in clients])
    except TmuxError:
        return False
    return bool(clients)


def _tell_untold(tmux, runtime) -> None:
    """A client attached (our hook): what the running sidecar had to say to nobody, once."""
    try:
        text = runtime.untold_path.read_text()
    except OSError:
        return
    if _tell_clients(tmux, text):
        runtime.untold_path.unlink(missing_ok=True)


def cmd_start(args) -> int:
    from ..sidecar.runtime import RESTARTS_MAX, RESTARTS_WINDOW, prune_ended
    tmux = tmux_for(args)
    runtime = runtime_for(tmux)
    # one start at a time: two hooks firing together (a client leaving as another comes) must
    # not both spawn a sidecar, nor both count against the restart budget
    runtime.hold_start_lock()
    _note_python(runtime)
    pid = runtime.running_pid()
    if pid and args.replace and _replace_stale(runtime, pid):
        pid = None
    if pid:
        _tell_untold(tmux, runtime)
        if not args.auto:
            say(f"tmux-agentstate: already watching {runtime.socket_path} (pid {pid})")
        return 0
    if args.auto:  # a hook: a client came or went (the dead sidecar's own control client too)
        if runtime.stopped_path.exists():
            return 0  # stopped on purpose: only an explicit start brings it back
        if not runtime.note_auto_start():
            why = f"it stopped {RESTARTS_MAX} times in {RESTARTS_WINDOW:.0f} s"
            _watcher_down(tmux, runtime, why)
            raise CliError(f"watcher down: {why}; see tmux-agentstate doctor, then "
                           "tmux-agentstate start")
        # a sidecar ran before (its lock file stays; the folder's `socket` note does not say
        # so, every command writes it): until the new one publishes
        if runtime.lock_path.exists():
            _say_in_segment(tmux, "watcher down, restarting…")
    else:
        runtime.stopped_path.unlink(missing_ok=True)
    prune_ended(runtime.dir.parent)
    runtime.ensure()
    cmd = [sys.executable, "-m", "tmux_agentstate", "watch", "--quiet", *server_args(args)]
    if args.interval:
        cmd += ["--interval", str(args.interval)]
    if args.intake:
        cmd += ["--intake", args.intake]
    # a sidecar that dies before its control client attached leaves no client to detach, so
    # no hook brings it back: it is started again here, within the same restart budget
    while True:
        pid = _spawn_until_ready(tmux, runtime, cmd)
        if pid:
            runtime.down_path.unlink(missing_ok=True)  # it watches again
            if not args.auto:
                say(f"tmux-agentstate: watching {runtime.socket_path} (pid {pid})")
            return 0
        if not runtime.note_auto_start():
            why = f"it stopped {RESTARTS_MAX} times in {RESTARTS_WINDOW:.0f} s"
            _watcher_down(tmux, runtime, why)
            raise CliError(f"watcher down: {why}; see {runtime.dir / 'sidecar.out'} and "
                           "tmux-agentstate doctor, then tmux-agentstate start")


START_WAIT = 5.0    # seconds for a new sidecar to take its lock
READY_WAIT = 10.0   # and then to have its control client attached
ASK_TMUX_AFTER = 2.0  # until then its first status says so; then (a full disk) tmux is asked


def _spawn_until_ready(tmux, runtime, cmd: list[str]) -> int | None:
    """Start a sidecar and wait until its control client is attached (from then on, its end
    is seen by our client-detached hook): its pid. None when it died first (or never took
    its lock). Attached: its first status names it, or (a full disk: no status) tmux lists a
    control client it started, asked twice a second (each command is a line in the user's
    show-messages). One alive but not attached after READY_WAIT counts as started."""
    import subprocess
    import time
    with open(runtime.dir / "sidecar.out", "ab") as out:
        # cwd /: `-m` puts the cwd first on sys.path, and a folder there must not shadow the
        # installed package (the plugin's own checkout, say)
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=out, cwd="/",
                                start_new_session=True, close_fds=True)
    started = time.monotonic()
    asked = started + ASK_TMUX_AFTER
    while (now := time.monotonic()) < started + START_WAIT + READY_WAIT:
        if proc.poll() is not None:  # died (its lock with it), or found one running already
            return runtime.running_pid() or None  # -1: one runs whose pid a full disk hid
        if runtime.running_pid():
            if (runtime.read_status() or {}).get("pid") == proc.pid:
                return proc.pid
            if now >= asked:
                asked = now + 0.5
                if _control_client_of(tmux, proc.pid):
                    return proc.pid
        time.sleep(0.05)
    return proc.pid if runtime.running_pid() and proc.poll() is None else None


def _control_client_of(tmux, pid: int) -> bool:
    """Whether a control client the process `pid` started is attached to the server."""
    from .. import procs
    from ..tmux import TmuxError
    try:
        rows = tmux.run(["list-clients", "-F", "#{client_control_mode} #{client_pid}"])
    except TmuxError:
        return False
    return any(mode == "1" and client.isdigit() and procs.parent_pid(int(client)) == pid
               for mode, _, client in (row.partition(" ") for row in rows))


def _note_python(runtime) -> None:
    """This start's interpreter: where a sidecar whose own install vanished hands over to."""
    try:
        runtime.python_path.write_text(sys.executable)
    except OSError:
        pass


def _replace_stale(runtime, pid: int) -> bool:
    """Stop the running sidecar if it runs from another install than this command (the
    plugin's venv rebuilt by an update, moved, reinstalled): True when it was stopped. One
    that has not yet said what it runs from (just started) is left alone; one from before
    sidecars said so is replaced."""
    from ..sidecar import install
    status = runtime.read_status() or {}
    if pid < 0 or status.get("pid") != pid:
        return False
    theirs = status.get("install")
    if theirs == install.current().as_dict():
        return False
    return _terminate(runtime, pid)  # it takes its verdicts with it; ours come right after


def _terminate(runtime, pid: int) -> bool:
    """SIGTERM, up to 5 s for it to let go of its lock, then SIGKILL and a little more; False
    if it could not be signalled."""
    import signal
    import time
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError:
        return False
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and runtime.running_pid():
        time.sleep(0.05)
    if runtime.running_pid():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and runtime.running_pid() == pid:
            time.sleep(0.05)
    return True


def _say_in_segment(tmux, text: str) -> None:
    """Our own word in the status segment (where #{agentstate} is), until a sidecar publishes:
    a short form that tmux's default status-right-length shows whole (the whole line goes to
    a message or `doctor`)."""
    from ..sidecar.config import STYLES, in_own_style, segment_text
    from ..tmux import TmuxError
    text = segment_text(text)
    try:
        tmux.run(["set-option", "-gq", "@agentstate_summary",
                  in_own_style(STYLES['blocked'], f" agentstate: {text} ")])
    except TmuxError:
        pass


def _watcher_down(tmux, runtime, why: str) -> None:
    """No sidecar will run: no pane may go on showing a dead watcher's verdict as current. The
    segment says so briefly; `doctor` tells why (from the runtime folder)."""
    from ..tmux import TmuxError
    from ..plugin.wiring import PUBLISHED_PANE_OPTIONS, WINDOW_OPTIONS
    try:
        tmux.unset_everywhere(PUBLISHED_PANE_OPTIONS, WINDOW_OPTIONS)
    except TmuxError:
        pass
    try:
        runtime.down_path.write_text(f"watcher down: {why}\n")
    except OSError:
        pass
    _say_in_segment(tmux, "watcher down (doctor)")


def cmd_stop(args) -> int:
    tmux = tmux_for(args)
    runtime = runtime_for(tmux)
    runtime.stopped_path.touch()  # our hooks leave it stopped
    pid = runtime.running_pid()
    if not pid or pid < 0:
        say("tmux-agentstate: not running")
    else:
        _terminate(runtime, pid)
        say(f"tmux-agentstate: stopped (pid {pid})")
    if not runtime.running_pid():
        runtime.forget_pane_text()  # the folder may outlive the server: no pane text in it
    if args.clean:
        from ..plugin.wiring import unwire
        for line in unwire(tmux, tmux.global_options()):
            say(f"tmux-agentstate: {line}")
    return 0


def cmd_status(args) -> int:
    runtime = runtime_for(tmux_for(args))
    pid = runtime.running_pid()
    if not pid:
        say(f"not running for {runtime.socket_path}")
        return 3
    st = runtime.read_status() or {}
    panes = st.get("panes", [])
    say(f"running (pid {pid}) for {runtime.socket_path}; log {runtime.log_path}")
    say(f"{len(panes)} agent pane(s), {st.get('sweeps', 0)} sweeps")
    for p in panes:
        say(f"  {p['pane']:<5} {p['address']:<20} {p['agent']:<8} {p['state'] or '-':<8} via {p['mode']}")
    return 0
