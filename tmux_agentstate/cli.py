"""Command line: `tmux-agentstate SUBCOMMAND ...`.

Every failure the user can cause (a missing file, an unknown agent, a broken manifest) is one
line on stderr and a non-zero exit, never a traceback.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

from .config import INTAKES

EXIT_USAGE = 2
EXIT_FAIL = 1


class CliError(Exception):
    """A user-facing error: printed as one line, exit non-zero."""


def _size(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"(\d+)x(\d+)", text.strip())
    if not m or not (2 <= int(m.group(1)) <= 1000 and 2 <= int(m.group(2)) <= 1000):
        raise argparse.ArgumentTypeError(f"size must be ROWSxCOLS, e.g. 32x120 (got {text!r})")
    return int(m.group(1)), int(m.group(2))


def _err(msg: str) -> None:
    print(f"tmux-agentstate: {msg}", file=sys.stderr)


# -- classify --------------------------------------------------------------------------------------
def cmd_classify(args) -> int:
    from .catalog import Catalog
    from .screen import replay

    catalog = Catalog()
    status = 0
    for e in catalog.errors:
        _err(f"manifest error: {e}")
        status = EXIT_FAIL
    manifest = None
    if args.agent:
        manifest = catalog.get(args.agent)
        if manifest is None:
            _err(f"unknown agent {args.agent!r} (known: {', '.join(catalog.names()) or 'none'})")
            return EXIT_FAIL
    rows, cols = args.size
    for name in args.files:
        path = Path(name)
        try:
            data = path.read_bytes()
        except OSError as e:
            _err(f"{name}: cannot read: {e.strerror or e}")
            status = EXIT_FAIL
            continue
        if not data:
            _err(f"{name}: empty capture, nothing to classify")
            status = EXIT_FAIL
            continue
        screen = replay(data, rows, cols)
        bad = screen.invalid_utf8
        if bad > 16 and bad * 50 > len(data):
            _err(f"{name}: not terminal output ({bad} invalid UTF-8 sequences in {len(data)} bytes)")
            status = EXIT_FAIL
            continue
        if screen.truncated_tail:
            _err(f"{name}: warning: capture ends inside a UTF-8 sequence (read as U+FFFD)")
            status = EXIT_FAIL
        view = screen.view()
        m = manifest or catalog.infer(view)
        if m is None:
            _err(f"{name}: cannot tell which agent drew this screen; pass --agent "
                 f"({', '.join(catalog.names())})")
            status = EXIT_FAIL
            continue
        match = m.evaluate(view)
        from .manifest import take_faults
        for fault in take_faults():
            _err(f"{name}: manifest rule {fault}")
            status = EXIT_FAIL
        if args.json:
            print(json.dumps({"file": name, "agent": m.name, "state": match.state,
                              "rule": match.rule, "line": match.line}, ensure_ascii=False))
        else:
            detail = f" [{match.rule}] {match.line.strip()}" if match.rule else " [no rule: fallback]"
            print(f"{name}: {m.name} {match.state}{detail}")
    return status


# -- the sidecar -------------------------------------------------------------------------------------
def _tmux(args):
    from .tmux import Tmux
    return Tmux(socket_name=getattr(args, "L", None), socket_path=getattr(args, "S", None))


def _runtime(tmux):
    from .runtime import Runtime
    from .tmux import TmuxError
    try:
        socket = tmux.socket()
    except TmuxError as e:
        raise CliError(f"no tmux server at {tmux.label}: {e}") from None
    try:
        return Runtime(socket).ensure()
    except OSError as e:  # e.g. a folder of that name that belongs to another user
        raise CliError(f"cannot use the runtime folder: {e}") from None


def _server_args(args) -> list[str]:
    if getattr(args, "S", None):
        return ["-S", args.S]
    if getattr(args, "L", None):
        return ["-L", args.L]
    return []


def cmd_watch(args) -> int:
    import logging
    from logging.handlers import RotatingFileHandler

    from .config import Config
    from .sidecar import Sidecar
    tmux = _tmux(args)
    runtime = _runtime(tmux)
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

    from .runtime import RESTARTS_MAX, RESTARTS_WINDOW, prune_ended
    tmux = _tmux(args)
    runtime = _runtime(tmux)
    # one start at a time: two hooks firing together (a client leaving as another comes) must
    # not both spawn a sidecar, nor both count against the restart budget
    runtime.hold_start_lock()
    pid = runtime.running_pid()
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
    cmd = [sys.executable, "-m", "tmux_agentstate", "watch", "--quiet", *_server_args(args)]
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


def _say_in_segment(tmux, text: str) -> None:
    """Our own word in the status segment (where #{agentstate} is), until a sidecar publishes."""
    from .config import STYLES
    from .tmux import TmuxError
    try:
        tmux.run(["set-option", "-gq", "@agentstate_summary",
                  f"#[{STYLES['blocked']}] agentstate: {text} #[default]"])
    except TmuxError:
        pass


def _watcher_down(tmux, why: str) -> None:
    """No sidecar will run: no pane may go on showing a dead watcher's verdict as current."""
    from .tmux import TmuxError
    from .wiring import PUBLISHED_PANE_OPTIONS, WINDOW_OPTIONS
    try:
        tmux.unset_everywhere(PUBLISHED_PANE_OPTIONS, WINDOW_OPTIONS)
    except TmuxError:
        pass
    _say_in_segment(tmux, f"watcher down ({why})")


def cmd_stop(args) -> int:
    import signal
    import time
    tmux = _tmux(args)
    runtime = _runtime(tmux)
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
        from .wiring import unwire
        key = tmux.global_options().get("@agentstate-key", "A")
        for line in unwire(tmux, key):
            print(f"tmux-agentstate: {line}")
    return 0


def cmd_status(args) -> int:
    runtime = _runtime(_tmux(args))
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


def sorted_agent_panes(tmux) -> list[dict]:
    order = {"blocked": 0, "working": 1, "idle": 2}
    return sorted(tmux.agent_panes(), key=lambda r: (order.get(r["state"], 3), -(r["since"] or 0)))


def cmd_list(args) -> int:
    import time
    from .tmux import TmuxError
    try:
        rows = sorted_agent_panes(_tmux(args))
    except TmuxError as e:
        raise CliError(str(e)) from None
    from .popup import format_row
    now = time.time()
    if args.json:
        for r in rows:
            print(json.dumps(r, ensure_ascii=False))
        return 0
    if not rows:
        print("no agents")
    for r in rows:
        print(f"{r['pane']:<5} " + format_row(r, now, 1000))
    return 0


def cmd_popup(args) -> int:
    import curses

    from .popup import run_popup
    from .tmux import TmuxError
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise CliError("the popup needs a terminal (prefix + A opens it); "
                       "for a plain list: tmux-agentstate list")
    tmux = _tmux(args)
    try:
        tmux.socket()
    except TmuxError as e:
        raise CliError(f"no tmux server at {tmux.label}: {e}") from None
    try:
        return run_popup(tmux, sorted_agent_panes, args.client)
    except curses.error as e:
        raise CliError(f"the popup could not draw: {e}") from None


def cmd_hook(args) -> int:
    from . import hook
    return hook.main([args.agent, args.event, *args.payload])


def cmd_launch(args) -> int:
    from .launch import LaunchError, launch
    try:
        launch(args.agent, args.args)
    except LaunchError as e:
        raise CliError(str(e)) from None
    return EXIT_FAIL  # not reached: launch() execs the agent


def _look(args):
    from .fresh import look
    from .tmux import TmuxError
    try:
        return look(_tmux(args), args.pane)
    except TmuxError as e:
        raise CliError(str(e)) from None


def cmd_explain(args) -> int:
    from .fresh import explain
    print("\n".join(explain(_look(args))))
    return 0


EXIT_REFUSED = 3


def cmd_send(args) -> int:
    lk = _look(args)
    if lk.info.dead:
        _err(f"{lk.info.pane_id} ({lk.info.address}) is dead (its program exited); nothing typed")
        return EXIT_FAIL
    if lk.state is not None and lk.state.state == "blocked":
        _err(f"{lk.info.pane_id} ({lk.info.address}) is blocked on a prompt "
             f"({lk.state.detail.strip()[:80]!r}); nothing typed. Use: tmux-agentstate answer "
             f"{lk.info.pane_id} CHOICE")
        return EXIT_REFUSED
    _tmux(args).send_text(lk.info.pane_id, args.text, enter=not args.no_enter)
    return 0


def cmd_answer(args) -> int:
    from .fresh import answer
    code, message = answer(_tmux(args), _look(args), args.choice)
    if code:
        _err(message)
    else:
        print(message)
    return code


def cmd_record(args) -> int:
    """A pane's raw output bytes into FILE (see record.py), until Ctrl-C, --seconds, or the
    pane is gone."""
    import shlex
    import signal
    import time

    from . import record
    from .tmux import TmuxError
    try:
        rec = record.start(_tmux(args), args.pane, Path(args.file), seed=not args.no_seed)
        info, out = rec.info, rec.out
        stop = []
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.append(1))
        print(f"recording {info.pane_id} ({info.address}, {info.height}x{info.width}) into {out}; "
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
    print(f"recorded {out.stat().st_size} bytes of {info.pane_id} into {out}; replay with: "
          f"tmux-agentstate classify --size {info.height}x{info.width} {shlex.quote(str(out))}")
    return 0


def cmd_doctor(args) -> int:
    from .doctor import diagnose
    findings = diagnose(_tmux(args))
    for f in findings:
        print(f.line())
    problems = sum(f.kind == "problem" for f in findings)
    print(f"{problems} problem(s)" if problems else "healthy")
    return EXIT_FAIL if problems else 0


def _add_server(p) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("-L", metavar="NAME", help="tmux socket name (as tmux -L)")
    g.add_argument("-S", metavar="PATH", help="tmux socket path (as tmux -S)")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tmux-agentstate",
                                description="Is the coding agent in each tmux pane working, idle, "
                                            "or blocked waiting on you?")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    c = sub.add_parser("classify", help="replay raw captured bytes into a screen and classify it")
    c.add_argument("--agent", help="manifest name (default: inferred from the screen)")
    c.add_argument("--size", type=_size, default=(32, 120), metavar="ROWSxCOLS",
                   help="emulated screen size (default 32x120)")
    c.add_argument("--json", action="store_true", help="one JSON object per file")
    c.add_argument("files", nargs="+", metavar="FILE")
    c.set_defaults(func=cmd_classify)

    for name, func, text in (("watch", cmd_watch, "run the sidecar in the foreground"),
                             ("start", cmd_start, "start the sidecar in the background (idempotent)")):
        w = sub.add_parser(name, help=text)
        _add_server(w)
        w.add_argument("--interval", type=float, help="sweep interval in seconds (default 0.7)")
        w.add_argument("--intake", choices=INTAKES,
                       help="emulate (default): parse a pane's bytes (pipe-pane) ourselves; pipe: "
                            "read tmux's rendering of a pane when its bytes say it changed; "
                            "capture: read every agent pane each tick")
        if name == "start":
            w.add_argument("--auto", action="store_true",
                           help="as our tmux hooks run it: silent; leaves a sidecar stopped on "
                                "purpose stopped, and one that keeps dying down")
        if name == "watch":
            w.add_argument("--quiet", action="store_true", help="exit 0 if one already runs")
            w.add_argument("-v", "--verbose", action="store_true", help="log to stderr too")
        w.set_defaults(func=func)
    for name, func, text in (("stop", cmd_stop, "stop the background sidecar"),
                             ("status", cmd_status, "say whether a sidecar runs and what it watches"),
                             ("popup", cmd_popup, "the prefix + A list of agent panes")):
        w = sub.add_parser(name, help=text)
        _add_server(w)
        if name == "stop":
            w.add_argument("--clean", action="store_true",
                           help="also take out our hooks, key binding, options and placeholders")
        if name == "popup":
            w.add_argument("--client", help="the client to switch (tmux passes #{client_name})")
        w.set_defaults(func=func)
    h = sub.add_parser("hook", help="record an agent's hook event for $TMUX_PANE (prints {})")
    h.add_argument("agent")
    h.add_argument("event", nargs="?", default="")
    h.add_argument("payload", nargs="*", help="a JSON payload given as an argument (Codex notify)")
    h.set_defaults(func=cmd_hook)
    la = sub.add_parser("launch", help="start an agent with our hooks injected for this launch")
    la.add_argument("agent")
    la.add_argument("args", nargs=argparse.REMAINDER)
    la.set_defaults(func=cmd_launch)
    for name, func, text in (("explain", cmd_explain, "every signal of a pane and why its state is what it is"),
                             ("send", cmd_send, "type text into an agent pane (refused while it is blocked)"),
                             ("answer", cmd_answer, "answer a blocked pane's dialog (yes, no, …)")):
        w = sub.add_parser(name, help=text)
        _add_server(w)
        w.add_argument("pane", help="pane id or target, e.g. %%3 or work:1.0")
        if name == "send":
            w.add_argument("text")
            w.add_argument("--no-enter", action="store_true", help="do not press Enter after")
        if name == "answer":
            w.add_argument("choice", help="a choice the agent's manifest lists under [answers]")
        w.set_defaults(func=func)
    r = sub.add_parser("record", help="save a pane's raw output bytes into FILE (a new fixture)")
    _add_server(r)
    r.add_argument("pane", metavar="PANE", help="target pane (%%3, session:window.pane)")
    r.add_argument("file", metavar="FILE")
    r.add_argument("--seconds", type=float, help="stop after this long (default: Ctrl-C)")
    r.add_argument("--no-seed", action="store_true",
                   help="only what the pane prints from now on, not the screen it shows now")
    r.set_defaults(func=cmd_record)

    d = sub.add_parser("doctor", help="check tmux, Python, manifests, the plugin's wiring, the "
                                      "sidecar and the agent CLIs; one line per problem with its fix")
    _add_server(d)
    d.set_defaults(func=cmd_doctor)

    ls = sub.add_parser("list", help="every agent pane: id, target, agent, state, since")
    _add_server(ls)
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=cmd_list)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except CliError as e:
        _err(str(e))
        return EXIT_FAIL
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_FAIL
