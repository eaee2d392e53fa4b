"""A fresh look at one pane, right now, without the sidecar: for `explain`, `send`, `answer`.

Typing into a pane on the strength of the last sweep could answer a prompt that appeared a
moment ago, so every command that types classifies the pane again first.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from .. import procs
from ..core.catalog import Catalog
from ..core import origin
from ..core.combine import PaneState, Report, combine, newest, report_from_claude_session, report_in_force
from ..core.manifest import Manifest, Match
from ..core.screen import PaneScreen, redraw_bytes
from ..tmux import PaneInfo, PaneView, Tmux, TmuxError


@dataclass
class Look:
    info: PaneInfo
    fg: procs.Foreground | None
    manifest: Manifest | None
    screen: PaneScreen
    match: Match | None
    hook: Report | None
    session: Report | None
    state: PaneState | None
    source: str = ""  # where the manifest in force comes from: bundled | cached | user


def seeded_screen(view: PaneView) -> PaneScreen:
    """A screen rebuilt from what tmux shows now (`capture-pane -p -e` with its cursor, title
    and scroll region, read in the same moment)."""
    screen = PaneScreen(view.rows, view.cols)
    screen.feed(seed_bytes(view))
    screen.title = view.title
    screen.dirty = True
    return screen


def seed_bytes(view: PaneView) -> bytes:
    return redraw_bytes(view.text, view.rows, view.cursor_y, view.cursor_x, view.alternate_on,
                        view.title, (view.scroll_top, view.scroll_bottom))


def session_report(manifest: Manifest | None, fg: procs.Foreground | None) -> Report | None:
    """The agent's own session file as a report (Claude Code only, so far)."""
    if manifest is None or manifest.name != "claude" or fg is None:
        return None
    found = procs.claude_session(fg)
    return report_from_claude_session(*found) if found else None


EXIT_OK, EXIT_FAIL, EXIT_REFUSED = 0, 1, 3


def answer(tmux: Tmux, lk: Look, choice: str) -> tuple[int, str]:
    """Type a blocked dialog's answer keys (the manifest's [answers]) after a fresh look.
    Returns (exit code, message); nothing is typed unless the code is 0."""
    if lk.state is None or lk.state.state != "blocked":
        return EXIT_REFUSED, (f"{lk.info.pane_id} ({lk.info.address}) is not blocked "
                              f"({lk.state.state if lk.state else 'no agent'}); nothing typed")
    keys = lk.manifest.answers.get(choice)
    if not keys:
        return EXIT_FAIL, (f"{lk.manifest.name} dialogs take: "
                           f"{', '.join(sorted(lk.manifest.answers)) or 'no answers'} "
                           f"(not {choice!r}); nothing typed")
    tmux.send_keys(lk.info.pane_id, keys)
    return EXIT_OK, f"answered {choice} in {lk.info.address}: {lk.state.detail.strip()[:80]}"


def find_pane(tmux: Tmux, target: str) -> PaneInfo:
    """The pane the user named, and only that one (see Tmux.resolve_pane)."""
    return tmux.resolve_pane(target)


def look(tmux: Tmux, target: str, catalog: Catalog | None = None) -> Look:
    catalog = catalog or Catalog()
    info = find_pane(tmux, target)
    fg = None if info.dead else procs.foreground(info.pane_pid)
    manifest = catalog.for_foreground(fg)
    view = tmux.capture_views([info.pane_id], escapes=True).get(info.pane_id)
    if view is None:
        raise TmuxError(f"{info.pane_id} ({info.address}) is gone")
    screen = seeded_screen(view)
    match = manifest.evaluate(screen.view()) if manifest else None
    hook = origin.proven(Report.parse(info.report), info.report, info.launch)
    session = session_report(manifest, fg)
    state = combine(manifest is not None, match, newest(hook, session), time.time())
    return Look(info, fg, manifest, screen, match, hook, session, state,
                catalog.source(manifest.name) if manifest else "")


def explain(lk: Look) -> list[str]:
    """Every signal, its age, and why the state is what it is."""
    now = time.time()
    out = [f"pane {lk.info.pane_id} ({lk.info.address}), {lk.info.width}x{lk.info.height}"]
    if lk.fg is None:
        out.append("process: cannot read the foreground process")
    else:
        cmd = " ".join(lk.fg.cmdline)[:100]
        out.append(f"process: pgid {lk.fg.pgid} {lk.fg.name!r} ({cmd})"
                   + (f", AGENTSTATE_AGENT={lk.fg.hint}" if lk.fg.hint else ""))
    if lk.manifest is None:
        out.append("agent: none in front → no state (options unset)")
        return out
    out.append(f"agent: {lk.manifest.name} (manifest v{lk.manifest.version}, {lk.source}: "
               f"{lk.manifest.path})")
    version, tested = procs.agent_version(lk.fg), lk.manifest.tested
    out.append(f"release: {version or 'unknown'}; "
               + ("the fixtures cover it" if version in tested else
                  f"the fixtures cover {', '.join(tested) or 'no release'}: a changed dialog "
                  "may be missed"))
    out.append(f"title: {lk.screen.title!r}")
    view = lk.screen.view()
    for rule in lk.manifest.rules:
        line = rule.match(view)
        mark = "MATCH" if line is not None else "  -  "
        out.append(f"  {mark} {rule.state:<8} {rule.id:<28} [{rule.region}]"
                   + (f" {line.strip()[:80]!r}" if line is not None else ""))
        if line is not None:
            break
    if lk.match is not None and lk.match.rule is None:
        out.append(f"  no rule matched → fallback {lk.manifest.fallback}")
    for name, rep in (("hook report", lk.hook), ("session file", lk.session)):
        if rep is None:
            refused = origin.refusal(lk.info.report, lk.info.launch) if name == "hook report" else None
            out.append(f"{name}: {refused or 'none'}")
        else:
            fresh = "in force" if report_in_force(rep, now) else "stale"
            out.append(f"{name}: {rep.state} ({now - rep.at:.1f}s ago, {rep.source}, {fresh})")
    st = lk.state
    why = {"screen": "the screen rules decide" if not (st and st.state == "blocked")
           else "a blocked prompt on screen always stands",
           "hook": "a fresh report from the agent beats the remaining screen rules"}
    out.append(f"state: {st.state} via {st.source}: {why.get(st.source, '')}" if st else "state: none")
    return out
