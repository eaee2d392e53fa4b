"""Commands about agent panes: `list`, `popup`, `next`, `explain`, `send`, `answer`, `report`."""
from __future__ import annotations

import sys

from .common import (EXIT_FAIL, EXIT_REFUSED, CliError, add_server, command, err, safe_json,
                     say, tmux_for)

EXAMPLES = {
    "explain": ("tmux-agentstate explain %3", "tmux-agentstate explain work:1.0",
                "tmux-agentstate explain --host devbox %7"),
    "send": ("tmux-agentstate send %3 'run the tests again'",
             "tmux-agentstate send --no-enter work:1.0 'draft'"),
    "answer": ("tmux-agentstate answer %3 yes", "tmux-agentstate answer work:1.0 no",
               "tmux-agentstate answer --host devbox %7 yes"),
    "report": ("tmux-agentstate report %3", "tmux-agentstate report %3 --into ~/reports"),
}


def add(sub) -> None:
    w = command(sub, "popup", "the prefix + A list of agent panes",
                "tmux display-popup -E tmux-agentstate popup")
    add_server(w)
    w.add_argument("--client", help="the client to switch (tmux passes #{client_name})")
    w.set_defaults(func=cmd_popup)
    for name, func, text in (("explain", cmd_explain, "every signal of a pane and why its state is what it is"),
                             ("send", cmd_send, "type text into an agent pane (refused while it is blocked)"),
                             ("answer", cmd_answer, "answer a blocked pane's dialog (yes, no, …)"),
                             ("report", cmd_report, "save a bundle of a pane whose state is wrong, for an issue")):
        w = command(sub, name, text, *EXAMPLES[name])
        add_server(w)
        w.add_argument("pane", help="pane id or target, e.g. %%3 or work:1.0")
        if name == "send":
            w.add_argument("text")
            w.add_argument("--no-enter", action="store_true", help="do not press Enter after")
        if name == "answer":
            w.add_argument("choice", help="a choice the agent's manifest lists under [answers]")
        if name in ("answer", "explain"):
            w.add_argument("--host", metavar="HOST", help="a pane of that remote host "
                           "(one of @agentstate-hosts), as `list` names it")
        if name == "report":
            w.add_argument("--into", metavar="DIR", help="the folder to save it in (default: "
                                          "~/.local/state/tmux-agentstate/reports)")
        w.set_defaults(func=func)
    w = command(sub, "next", "go to the agent pane that needs you most (prefix + a)",
                "tmux-agentstate next")
    add_server(w)
    w.add_argument("--client", help="the client to switch, and to tell (tmux passes #{client_name})")
    w.set_defaults(func=cmd_next)
    ls = command(sub, "list", "every agent pane: id, target, agent, state, since",
                 "tmux-agentstate list", "tmux-agentstate list -L work --json")
    add_server(ls)
    ls.add_argument("--json", action="store_true", help="one JSON object per pane, per line")
    ls.set_defaults(func=cmd_list)


def sorted_agent_panes(tmux, folder=None) -> list[dict]:
    """Every agent pane, local (`host` "") and remote, the most urgent first, then the most
    recent; a local one before a remote one of the same (the sort is stable)."""
    from ..plugin.popup import shown_state
    from ..plugin.remote import all_rows
    order = {"blocked": 0, "done": 1, "working": 2, "idle": 3}
    return sorted(all_rows(tmux, folder),
                  key=lambda r: (order.get(shown_state(r), 4), -(r["since"] or 0)))


def cmd_list(args) -> int:
    import time
    from ..tmux import TmuxError
    try:
        rows = sorted_agent_panes(tmux_for(args))
    except TmuxError as e:
        raise CliError(str(e)) from None
    from ..plugin.popup import format_row
    now = time.time()
    if args.json:
        from ..core.catalog import Catalog
        catalog = Catalog()
        for r in rows:
            m = catalog.get(r["agent"])
            # whether the fixtures cover the release that runs (None: either is unknown)
            r["covered"] = (r["agent_version"] in m.tested
                            if m is not None and m.tested and r["agent_version"] else None)
            say(safe_json(r))
        return 0
    if not rows:
        say("no agents")
    for r in rows:
        say(f"{r['pane']:<5} " + format_row(r, now, 1000))
    return 0


def cmd_next(args) -> int:
    """Said on the client (the key's run-shell shows no output) and printed."""
    from ..plugin.nextkey import go_next
    from ..tmux import TmuxError, tmux_quote
    tmux = tmux_for(args)
    try:
        line = go_next(tmux, args.client)
        if args.client:
            tmux.run(["display-message", "-c", args.client, "-d", "3000",
                      tmux_quote(f"agentstate: {line}")])
    except TmuxError as e:
        raise CliError(str(e)) from None
    say(line)
    return 0


def cmd_popup(args) -> int:
    import curses

    from ..plugin.popup import run_popup
    from ..tmux import TmuxError
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise CliError("the popup needs a terminal (prefix + A opens it); "
                       "for a plain list: tmux-agentstate list")
    tmux = tmux_for(args)
    try:
        tmux.socket()
    except TmuxError as e:
        raise CliError(f"no tmux server at {tmux.label}: {e}") from None
    from ..plugin.remote import runtime_dir
    folder = runtime_dir(tmux)  # once: the popup re-reads its rows every second
    try:
        return run_popup(tmux, lambda t: sorted_agent_panes(t, folder), args.client)
    except curses.error as e:
        raise CliError(f"the popup could not draw: {e}") from None


def _look(args):
    from ..panes.fresh import look
    from ..tmux import TmuxError
    try:
        return look(tmux_for(args), args.pane)
    except TmuxError as e:
        raise CliError(str(e)) from None


def _remote_row(args):
    """(the runtime folder, the row of `args.pane` (%N or its target) on `args.host` as the
    sidecar last wrote it)."""
    from ..plugin.remote import remote_rows, runtime_dir
    from ..tmux import TmuxError
    try:
        folder = runtime_dir(tmux_for(args))
        rows = remote_rows(folder)
    except TmuxError as e:
        raise CliError(str(e)) from None
    on_host = [r for r in rows if r["host"] == args.host]
    if not on_host:
        raise CliError(f"no agent panes of host {args.host!r} are known here (tmux-agentstate "
                       f"list shows every host's; is it in @agentstate-hosts?)")
    hits = [r for r in on_host if args.pane in (r["pane"], r["target"])]
    if len(hits) != 1:
        raise CliError(f"{args.pane!r} is no agent pane of {args.host} "
                       f"({'several match' if hits else 'none matches'}); name it as %N")
    return folder, hits[0]


def cmd_explain(args) -> int:
    if args.host:
        import time
        from ..plugin.popup import age, shown_state
        _, r = _remote_row(args)
        now = time.time()
        stale = (f" (stale: {r['host']} is silent or unreachable, heard {age(r['last_update'], now)}"
                 f" ago; the state is the last one known)" if r["stale"] else "")
        say(f"{r['pane']} ({r['host']}:{r['target']}) is a remote pane: this is the row its "
            f"host's sidecar sent{stale}")
        for name in ("state", "agent", "agent_version", "since", "source", "detail", "error",
                     "context", "done"):
            value = shown_state(r) if name == "state" else r.get(name)
            if name == "since" and value:
                value = f"{value} ({age(value, now)} ago)"
            say(f"  {name:<14} {value if value not in (None, '') else '-'}")
        say(f"every signal and why: tmux-agentstate explain {r['pane']}, on {r['host']}")
        return 0
    from ..panes.fresh import explain
    say("\n".join(explain(_look(args))))
    return 0


def cmd_send(args) -> int:
    lk = _look(args)
    if lk.info.dead:
        err(f"{lk.info.pane_id} ({lk.info.address}) is dead (its program exited); nothing typed")
        return EXIT_FAIL
    # the same verdict the sidecar gives: a dialog on screen, or a report of one that the
    # screen has not moved on from since (panes/fresh.py)
    if lk.state is not None and lk.state.state == "blocked":
        what = (f"on a prompt ({lk.state.detail.strip()[:80]!r})" if lk.state.source == "screen"
                else f"by a report ({lk.state.rule}) the screen has not moved on from")
        err(f"{lk.info.pane_id} ({lk.info.address}) is blocked {what}; nothing typed. Use: "
            f"tmux-agentstate answer {lk.info.pane_id} CHOICE")
        return EXIT_REFUSED
    from ..tmux import TmuxError
    try:
        tmux_for(args).send_text(lk.info.pane_id, args.text, enter=not args.no_enter)
    except TmuxError as e:
        raise CliError(str(e)) from None
    return 0


def cmd_answer(args) -> int:
    if args.host:  # the host's own fresh look decides, over the sidecar's link
        from ..plugin.remote import answer as remote_answer
        folder, r = _remote_row(args)
        code, message = remote_answer(folder, r, args.choice)
        (err if code else say)(f"{r['host']}: {message}")
        return code if 0 <= code < 256 else EXIT_FAIL
    from ..panes.fresh import answer
    from ..tmux import TmuxError
    lk = _look(args)
    try:
        code, message = answer(tmux_for(args), lk, args.choice)
    except TmuxError as e:  # the pane went away while we typed or looked
        raise CliError(f"{lk.info.pane_id} ({lk.info.address}): {e}") from None
    if code:
        err(message)
    else:
        say(message)
    return code


def cmd_report(args) -> int:
    from pathlib import Path

    from ..panes.report import ISSUES, save_report
    from ..tmux import TmuxError
    from .common import runtime_for
    tmux = tmux_for(args)
    try:
        folder, archive = save_report(tmux, args.pane, runtime_for(tmux),
                                      Path(args.into).expanduser() if args.into else None)
    except TmuxError as e:
        raise CliError(str(e)) from None
    except OSError as e:
        raise CliError(f"cannot save the report: {e.strerror or e}") from None
    say(report_note(folder, archive, ISSUES))
    return 0


def report_note(folder, archive, issues: str) -> str:
    return (f"saved {folder} ({', '.join(sorted(p.name for p in folder.iterdir()))})\n"
            f"It holds what the pane shows: read it, then attach {archive} to an issue at "
            f"{issues} and say which state the pane was really in.")
