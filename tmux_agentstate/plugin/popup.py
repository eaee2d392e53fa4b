"""`prefix + A`: a list of agent panes in `display-popup -E`, blocked first; Enter jumps there.
Remote hosts' panes are listed with their host (`host:session:window.pane`); a stale one (its
host silent or unreachable: the state shown is the last one known) is dimmed and marked.

Pane text (the prompt line) is shown through curses, never through a tmux format, and control
characters are dropped, so nothing in it can run or restyle anything.
"""
from __future__ import annotations

import curses
import os
import time

from ..tmux import Tmux, TmuxError, tmux_quote
from . import remote
from .remote import where
from .wiring import command_off_path

COLOURS = {"blocked": curses.COLOR_RED, "done": curses.COLOR_CYAN, "working": curses.COLOR_YELLOW,
           "idle": curses.COLOR_GREEN}


def printable(text: str) -> str:
    return "".join(ch if ch.isprintable() else " " for ch in text)


def age(since: int | None, now: float) -> str:
    if not since:
        return "?"
    s = max(0, int(now - since))
    return f"{s}s" if s < 60 else f"{s // 60}m" if s < 3600 else f"{s // 3600}h"


def shown_state(r: dict) -> str:
    """`done`: idle, its turn finished while no client showed it (not seen since)."""
    return "done" if r["state"] == "idle" and r.get("done") else r["state"]


def reported(r: dict) -> str:
    """The kind and message of the agent's own OSC report when it decides the row's state
    ("" otherwise): "[permission] Run rm -rf build?"."""
    from ..core.combine import parse_osc_option
    shown = parse_osc_option(r.get("osc") or "")
    if shown is None or not shown.decides:
        return ""
    st = shown.record.status
    return " ".join(x for x in (f"[{st.kind}]" if st.kind else "", printable(st.message)) if x)


def format_row(r: dict, now: float, width: int) -> str:
    """State, age, where (with its host, for a remote pane), agent, context in use, then the
    prompt line or the error a turn ended in, marked, or what the agent's own report that
    decides says (its kind, its message); a stale remote row says how long its host has been
    silent."""
    context = f"{r['context']}%" if r.get("context") is not None else ""
    detail = reported(r) or printable(r["detail"])
    if r.get("error"):
        detail = f"[{r['error']}] {detail}"
    if r.get("stale"):
        detail = f"[stale, heard {age(r.get('last_update'), now)} ago] {detail}"
    place = printable(where(r))
    line = (f"{shown_state(r):<8} {age(r['since'], now):>4}  {place:<14} {printable(r['agent']):<8} "
            f"{context:>4}  {detail}")
    return line[: max(0, width - 1)]


class Selection:
    """Which row is selected, kept by pane, not by row: the list is re-read every second and
    re-sorts (a pane that becomes blocked moves to the top), and a key must act on the pane the
    user chose. When that pane is gone, the row nearest where it was is selected."""

    def __init__(self):
        self.pane: str | None = None
        self.host = ""  # pane ids repeat across hosts: a pane is (host, pane)
        self.index = 0

    def _take(self, rows: list[dict]) -> None:
        self.pane = rows[self.index]["pane"] if rows else None
        self.host = rows[self.index].get("host", "") if rows else ""

    def follow(self, rows: list[dict]) -> int:
        """The selected row's index in freshly loaded `rows`."""
        at = next((i for i, r in enumerate(rows)
                   if r["pane"] == self.pane and r.get("host", "") == self.host), None)
        if at is None:  # gone (or the first load): the row where it was, or the last
            at = min(self.index, max(0, len(rows) - 1))
        self.index = at
        self._take(rows)
        return at

    def move(self, rows: list[dict], step: int) -> int:
        self.index = min(max(self.index + step, 0), max(0, len(rows) - 1))
        self._take(rows)
        return self.index


def answer(tmux: Tmux, pane: str, choice: str, row: dict | None = None) -> str:
    """Answer a dialog after a fresh look (the prompt may be gone since the list was drawn);
    a remote pane's by its host's own fresh look, through the sidecar's link."""
    if row is not None and row.get("host"):
        code, text = remote.answer(remote.runtime_dir(tmux), row, choice)
        return printable(f"{row['host']}: {text}")
    from ..panes import fresh
    try:
        return fresh.answer(tmux, fresh.look(tmux, pane), choice)[1]
    except TmuxError as e:
        return f"cannot look at {pane}: {e}"


def report(tmux: Tmux, pane: str) -> str:
    """A miss bundle of the pane (`report`), and where it went."""
    from ..panes.report import save_report
    from ..sidecar.runtime import Runtime
    try:
        _, archive = save_report(tmux, pane, Runtime(tmux.socket()))
    except (TmuxError, OSError) as e:
        return f"no report: {e}"
    return f"report saved: {archive}; attach it to an issue with the state you saw"


def say_on(tmux: Tmux, client: str | None, line: str) -> None:
    """One line on the client (the popup is closed by then), or printed without one."""
    line = printable(line)
    if client:
        tmux.run(["display-message", "-c", client, "-d", "3000", tmux_quote(f"agentstate: {line}")])
    else:
        print(f"tmux-agentstate: {line}")


def run_popup(tmux: Tmux, load, client: str | None = None) -> int:
    off_path = command_off_path()
    def ui(stdscr) -> str | None:
        curses.curs_set(0)
        stdscr.timeout(1000)
        try:
            curses.start_color()
            curses.use_default_colors()
            for i, c in enumerate(COLOURS.values(), 1):
                curses.init_pair(i, c, -1)
        except curses.error:
            pass
        pairs = {s: curses.color_pair(i) for i, s in enumerate(COLOURS, 1)}
        selection = Selection()
        message = ""
        while True:
            try:
                rows = load(tmux)
            except TmuxError:
                rows = []
            now = time.time()
            stdscr.erase()
            h, w = stdscr.getmaxyx()
            stdscr.addnstr(0, 0, "agents  (\u2191/\u2193 j/k move, Enter jump, y/n answer a blocked one, "
                                 "r report a wrong state, q close)", w - 1, curses.A_BOLD)
            if message:
                stdscr.addnstr(h - 1, 0, message, w - 1, curses.A_BOLD)
            elif off_path:  # TPM's venv: the command line the user would type is not on PATH
                stdscr.addnstr(h - 1, 0, f"command line: {off_path}", w - 1, curses.A_DIM)
            if not rows:
                stdscr.addnstr(2, 2, "no agents", w - 3)
            sel = selection.follow(rows)
            for i, r in enumerate(rows[: max(0, h - 2)]):
                attr = pairs.get(shown_state(r), 0) | (curses.A_REVERSE if i == sel else 0)
                if r.get("stale"):
                    attr |= curses.A_DIM
                stdscr.addnstr(i + 2, 0, format_row(r, now, w), w - 1, attr)
            stdscr.refresh()
            key = stdscr.getch()
            if key in (ord("q"), 27):
                return None
            if key in (curses.KEY_DOWN, ord("j")):
                sel = selection.move(rows, 1)
            elif key in (curses.KEY_UP, ord("k")):
                sel = selection.move(rows, -1)
            elif key in (curses.KEY_ENTER, 10, 13) and rows:
                return rows[sel]
            elif key == ord("r") and rows and rows[sel].get("host"):
                message = (f"a report is of a local pane: run tmux-agentstate report "
                           f"{rows[sel]['pane']} on {printable(rows[sel]['host'])}")
            elif key == ord("r") and rows:
                message = report(tmux, rows[sel]["pane"])
            elif key in (ord("y"), ord("n")) and rows and rows[sel]["state"] == "blocked":
                choice = "yes" if key == ord("y") else "no"
                r = rows[sel]
                prompt = (f"answer {choice!r} in {printable(where(r))}: {printable(r['detail'])[:60]} ? "
                          f"press {chr(key)} again to confirm")
                stdscr.addnstr(h - 1, 0, prompt.ljust(w - 1), w - 1, curses.A_REVERSE)
                stdscr.timeout(-1)
                confirmed = stdscr.getch() == key
                stdscr.timeout(1000)
                message = answer(tmux, r["pane"], choice, r) if confirmed else "not answered"

    for stale in ("LINES", "COLUMNS"):  # ncurses prefers these to the pane's real size
        os.environ.pop(stale, None)
    target = curses.wrapper(ui)
    if target:
        try:
            if target.get("host"):
                say_on(tmux, client, remote.reach(tmux, target, client))
            else:
                tmux.jump_to(target["pane"], client)
        except TmuxError as e:
            print(f"tmux-agentstate: cannot jump to {printable(where(target))}: {e}")
            return 1
    return 0
