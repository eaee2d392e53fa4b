"""The sidecar's commands: `watch` (in the foreground), `start` (in the background, as the
plugin's hooks run it), `stop`, `status`."""
from __future__ import annotations

import os
import sys

from ..sidecar.config import INTAKES
from .common import CliError, add_server, runtime_for, server_args, tmux_for


def add(sub) -> None:
    for name, func, text in (("watch", cmd_watch, "run the sidecar in the foreground"),
                             ("start", cmd_start, "start the sidecar in the background (idempotent)")):
        w = sub.add_parser(name, help=text)
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
        w.set_defaults(func=func)
    for name, func, text in (("stop", cmd_stop, "stop the background sidecar"),
                             ("status", cmd_status, "say whether a sidecar runs and what it watches")):
        w = sub.add_parser(name, help=text)
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
    root.info("watching %s every %.2fs (pid %d)", runtime.socket_path, config.interval, os.getpid())
    Sidecar(tmux, runtime, config=config).run()
    return 0


def cmd_start(args) -> int:
    import subprocess
    import time

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
        if not args.auto:
            print(f"tmux-agentstate: already watching {runtime.socket_path} (pid {pid})")
        return 0
    if args.auto:  # a hook: a client came or went (the dead sidecar's own control client too)
        if runtime.stopped_path.exists():
            return 0  # stopped on purpose: only an explicit start brings it back
        if not runtime.note_auto_start():
            why = f"it stopped {RESTARTS_MAX} times in {RESTARTS_WINDOW:.0f} s"
            _watcher_down(tmux, why)
            raise CliError(f"watcher down: {why}; see tmux-agentstate doctor, then "
                           "tmux-agentstate start")
        if (runtime.dir / "socket").exists():  # one ran before: until the new one publishes
            _say_in_segment(tmux, "watcher down, restarting…")
    else:
        runtime.stopped_path.unlink(missing_ok=True)
    prune_ended(runtime.dir.parent)
    runtime.ensure_with_socket()
    cmd = [sys.executable, "-m", "tmux_agentstate", "watch", "--quiet", *server_args(args)]
    if args.interval:
        cmd += ["--interval", str(args.interval)]
    if args.intake:
        cmd += ["--intake", args.intake]
    with open(runtime.dir / "sidecar.out", "ab") as out:
        # cwd /: `-m` puts the cwd first on sys.path, and a folder there must not shadow the
        # installed package (the plugin's own checkout, say)
        subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=out, cwd="/",
                         start_new_session=True, close_fds=True)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        pid = runtime.running_pid()
        if pid:
            if not args.auto:
                print(f"tmux-agentstate: watching {runtime.socket_path} (pid {pid})")
            return 0
        time.sleep(0.05)
    raise CliError(f"the sidecar did not start; see {runtime.dir / 'sidecar.out'}")


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
    import signal
    import time

    from ..sidecar import install
    status = runtime.read_status() or {}
    if pid < 0 or status.get("pid") != pid:
        return False
    theirs = status.get("install")
    if theirs == install.current().as_dict():
        return False
    try:
        os.kill(pid, signal.SIGTERM)  # it takes its verdicts with it; ours come right after
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
    """Our own word in the status segment (where #{agentstate} is), until a sidecar publishes."""
    from ..sidecar.config import STYLES
    from ..tmux import TmuxError
    try:
        tmux.run(["set-option", "-gq", "@agentstate_summary",
                  f"#[{STYLES['blocked']}] agentstate: {text} #[default]"])
    except TmuxError:
        pass


def _watcher_down(tmux, why: str) -> None:
    """No sidecar will run: no pane may go on showing a dead watcher's verdict as current."""
    from ..tmux import TmuxError
    from ..plugin.wiring import PUBLISHED_PANE_OPTIONS, WINDOW_OPTIONS
    try:
        tmux.unset_everywhere(PUBLISHED_PANE_OPTIONS, WINDOW_OPTIONS)
    except TmuxError:
        pass
    _say_in_segment(tmux, f"watcher down ({why})")


def cmd_stop(args) -> int:
    import signal
    import time
    tmux = tmux_for(args)
    runtime = runtime_for(tmux)
    runtime.stopped_path.touch()  # our hooks leave it stopped
    pid = runtime.running_pid()
    if not pid or pid < 0:
        print("tmux-agentstate: not running")
    else:
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and runtime.running_pid():
            time.sleep(0.05)
        if runtime.running_pid():
            os.kill(pid, signal.SIGKILL)
        print(f"tmux-agentstate: stopped (pid {pid})")
    if args.clean:
        from ..plugin.wiring import unwire
        for line in unwire(tmux, tmux.global_options()):
            print(f"tmux-agentstate: {line}")
    return 0


def cmd_status(args) -> int:
    runtime = runtime_for(tmux_for(args))
    pid = runtime.running_pid()
    if not pid:
        print(f"not running for {runtime.socket_path}")
        return 3
    st = runtime.read_status() or {}
    panes = st.get("panes", [])
    print(f"running (pid {pid}) for {runtime.socket_path}; log {runtime.log_path}")
    print(f"{len(panes)} agent pane(s), {st.get('sweeps', 0)} sweeps")
    for p in panes:
        print(f"  {p['pane']:<5} {p['address']:<20} {p['agent']:<8} {p['state'] or '-':<8} via {p['mode']}")
    return 0
