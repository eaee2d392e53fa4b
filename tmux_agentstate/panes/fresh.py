"""A fresh look at one pane, right now, without the sidecar: for `explain`, `send`, `answer`.

Typing into a pane on the strength of the last sweep could answer a prompt that appeared a
moment ago, so every command that types classifies the pane again first. Reports are weighed
by the sidecar's own rule (core/combine.py): one is superseded once the screen's verdict
changed after it, which the fresh look knows from what the sidecar published
(`@agentstate_screen`, read with the screen). `answer` types only into a dialog on screen now,
never on a report alone, and looks again after typing: a dialog still there is said.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass

from .. import procs
from ..core.catalog import Catalog
from ..core import origin
from ..core.combine import (REPORT_LIFETIME, PaneState, RecordShown, Report, combine,
                            fresh_screen_changed_at, newest, parse_osc_option, parse_screen_option,
                            record_decides, record_source, report_in_force)
from ..core.answers import Pick
from ..core.infer import present, without_tmux_status
from ..core.manifest import Manifest, Match
from ..core.tunnels import foreground_tunnel
from ..core.screen import PaneScreen
from ..sidecar.seed import seeded_screen
from ..sidecar.watch import session_report
from ..tmux import PaneInfo, Tmux, TmuxError


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
    at: float = 0.0   # unix time of this look
    screen_published: str = ""  # @agentstate_screen: the sidecar's verdict and its change
    screen_changed_at: float = 0.0  # when the screen's verdict last changed (0: unknown)
    via: str | None = None  # an SSH-like client in front: the agent is inferred from the screen
    osc: RecordShown | None = None  # the agent's own OSC record, as the sidecar published it


EXIT_OK, EXIT_FAIL, EXIT_REFUSED = 0, 1, 3
TAKEN_WAIT = 2.0   # seconds to see a dialog leave (or change) after its answer is typed
POLL = 0.1     # between looks: a capture each, 20 at most


def answer(tmux: Tmux, lk: Look, choice: str, wait: float = TAKEN_WAIT) -> tuple[int, str]:
    """Type the answer keys of the blocked dialog on screen now, then look until it left or
    changed. Returns (exit code, message); nothing is typed if the dialog is not on screen or
    does not take `choice`."""
    where = f"{lk.info.pane_id} ({lk.info.address})"
    if lk.match is None or lk.match.state != "blocked" or lk.manifest is None:
        if lk.state is not None and lk.state.state == "blocked":  # a report only
            return EXIT_REFUSED, (f"{where}: a report ({lk.state.rule}) says blocked, but no dialog "
                                  "is on screen now; nothing typed")
        return EXIT_REFUSED, (f"{where} is not blocked ({lk.state.state if lk.state else 'no agent'}"
                              "); nothing typed")
    rule, answers = lk.manifest.dialog_answers(lk.screen.view())
    dialog = f"this {lk.manifest.name} dialog ({rule or lk.match.rule})"
    keys = answers.get(choice)
    if keys is None:
        takes = (f"takes {', '.join(sorted(answers))}" if answers
                 else "takes no set answer: answer it in the pane")
        return EXIT_FAIL, f"{dialog} {takes} (not {choice!r}); nothing typed"
    if isinstance(keys, Pick):
        code, message = _pick(tmux, lk, keys, wait)
        if code:
            return code, f"{where}: {message}"
    else:
        tmux.send_keys(lk.info.pane_id, list(keys))
    if not _dialog_left(tmux, lk, wait):
        return EXIT_FAIL, (f"{where}: typed {choice} but {dialog} is still on screen after "
                           f"{wait:g} s ({one_row(lk.match.line)!r}): not taken")
    return EXIT_OK, f"answered {choice} in {lk.info.address}: {one_row(lk.match.line)}"


def one_row(text: str | None) -> str:
    """A matched row as said back: its words, without the box edges around it."""
    return " ".join(re.sub(r"^[\s\u2500-\u257f]+|[\s\u2500-\u257f]+$", "", text or "").split())[:80]


def _view_now(tmux: Tmux, lk: Look):
    view = tmux.capture_views([lk.info.pane_id], escapes=True).get(lk.info.pane_id)
    return None if view is None else seeded_screen(view).view()


def _dialog_left(tmux: Tmux, lk: Look, wait: float) -> bool:
    """Whether the dialog answered left the screen or changed within `wait` seconds: the
    same blocked rule matching the same row all along is a dialog that did not take it."""
    deadline = time.monotonic() + wait
    while True:
        view = _view_now(tmux, lk)
        if view is None:
            return True  # the pane went away: nothing is waiting there any more
        now = lk.manifest.evaluate(view)
        if now.rule != lk.match.rule or now.line != lk.match.line:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL)


BORDER = re.compile(r"[\s\u2500-\u257f]*")  # what may stand left of an option: room, box edges


def _label(text: str) -> str:
    """An option's text without the room and the box edge right of it."""
    return re.sub(r"[\s\u2500-\u257f]+$", "", text).strip()


def options(rows: list[str], marker: str) -> tuple[list[str], int] | None:
    """The options of the selection list on screen: (their labels, top to bottom; the index of
    the selected one), or None without a selection. The selection is the last row holding
    `marker` before some text; the options are the rows around it whose text starts in the
    same column (rows indented deeper are an option's description), up to a blank row or
    one that starts further left."""
    at = next((i for i in range(len(rows) - 1, -1, -1)
               if marker in rows[i] and rows[i].split(marker, 1)[1].strip()), None)
    if at is None:
        return None
    row = rows[at]
    after = row.index(marker) + len(marker)
    column = after + len(row[after:]) - len(row[after:].lstrip())
    if not BORDER.fullmatch(row[:row.index(marker)]):
        return None

    def label(r: str) -> str | None:
        if not BORDER.fullmatch(r[:column]) or len(r) <= column or r[column].isspace():
            return None
        return _label(r[column:])

    def walk(step: int) -> list[str]:
        out, i = [], at + step
        while 0 <= i < len(rows):
            r = rows[i]
            if not r.strip() or BORDER.fullmatch(r):
                break
            text = label(r)
            if text is not None:
                out.append(text)
            elif not BORDER.fullmatch(r[:column]):
                break  # text further left: the list ended
            i += step
        return out
    above, below = walk(-1), walk(1)
    return above[::-1] + [_label(row[after:])] + below, len(above)


def _pick(tmux: Tmux, lk: Look, pick: Pick, wait: float) -> tuple[int, str]:
    """Move the selection to the option `pick` names, see it there, then Enter."""
    found = options(lk.screen.view().rows, pick.marker)
    labels, selected = found if found else ([], 0)
    target = next((i for i, text in enumerate(labels) if pick.label.search(text)), None)
    if target is None:
        return EXIT_FAIL, (f"no option matching {pick.label.pattern!r} in the dialog on screen "
                           f"({', '.join(repr(t[:30]) for t in labels) or 'no selection list'}); "
                           "nothing typed")
    moves = target - selected
    if moves:
        tmux.send_keys(lk.info.pane_id, ["Down" if moves > 0 else "Up"] * abs(moves))
        deadline = time.monotonic() + wait
        while True:
            view = _view_now(tmux, lk)
            now = options(view.rows, pick.marker) if view is not None else None
            if now is not None and pick.label.search(now[0][now[1]]):
                break
            if view is None or time.monotonic() >= deadline:
                return EXIT_FAIL, (f"moved the selection {abs(moves)} row(s) but it is not on "
                                   f"{labels[target][:40]!r}; Enter not pressed")
            time.sleep(POLL)
    tmux.send_keys(lk.info.pane_id, ["Enter"])
    return EXIT_OK, ""


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
    now = time.time()
    via = foreground_tunnel(fg) if manifest is None else None
    rules_view = without_tmux_status(screen.view()) if via else screen.view()
    if via:
        manifest = _inferred(tmux, info, catalog, rules_view)
    match = manifest.evaluate(rules_view) if manifest else None
    # the report, its launch and the sidecar's screen verdict as of the screen's moment (one
    # list-panes); a report counts only with its proof of origin. Through a tunnel, no local
    # report is about the agent on the far side
    hook = None if via else origin.proven(Report.parse(view.report), view.report, view.launch)
    session = None if via else session_report(manifest, fg)
    changed_at = fresh_screen_changed_at(view.screen_verdict, match.state, now) if match else 0.0
    # the agent's OSC record: only a sidecar reading the pane's bytes has it (it publishes it)
    osc = parse_osc_option(view.osc) if manifest is not None else None
    state = combine(manifest is not None, match, newest(hook, session), now, REPORT_LIFETIME,
                    changed_at, osc.record if osc else None)
    return Look(info, fg, manifest, screen, match, hook, session, state,
                catalog.source(manifest.name) if manifest else "", now, view.screen_verdict,
                changed_at, via, osc)


def _inferred(tmux: Tmux, info: PaneInfo, catalog: Catalog, view) -> Manifest | None:
    """A tunnel pane's agent: the one the sidecar adopted (its hysteresis: core/infer.py), else
    the one this screen alone shows."""
    try:
        name = "".join(tmux.run(["display-message", "-p", "-t", info.pane_id,
                                 "#{@agentstate_agent}"])).strip()
    except TmuxError:
        name = ""
    return catalog.get(name) or present(catalog.by_name.values(), view)


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
        out.append(f"agent: none seen on the screen through {lk.via} → no state (options unset)"
                   if lk.via else "agent: none in front → no state (options unset)")
        return out
    out.append(f"agent: {lk.manifest.name}"
               + (f", inferred from the screen through {lk.via}" if lk.via else "")
               + f" (manifest v{lk.manifest.version}, {lk.source}: {lk.manifest.path})")
    version, tested = None if lk.via else procs.agent_version(lk.fg), lk.manifest.tested
    out.append(f"release: {version or 'unknown'}; "
               + ("identity only: no screen rules, its own reports decide (idle without one)"
                  if lk.manifest.identity_only else
                  "the fixtures cover it" if version in tested else
                  f"the fixtures cover {', '.join(tested) or 'no release'}: a changed dialog "
                  "may be missed"))
    out.append(f"title: {lk.screen.title!r}")
    view = without_tmux_status(lk.screen.view()) if lk.via else lk.screen.view()
    for rule in lk.manifest.rules:
        line = rule.match(view)
        mark = "MATCH" if line is not None else "  -  "
        out.append(f"  {mark} {rule.state:<8} {rule.id:<28} [{rule.region}]"
                   + (f" {line.strip()[:80]!r}" if line is not None else ""))
        if line is not None:
            break
    if lk.match is not None and lk.match.rule is None:
        out.append(f"  no rule matched → fallback {lk.manifest.fallback}")
    verdict = lk.match.state if lk.match else "none"
    published = parse_screen_option(lk.screen_published)
    if published is None:
        out.append(f"screen verdict: {verdict} (no sidecar published when it changed: a report "
                   "is not taken as superseded)")
    else:
        out.append(f"screen verdict: {verdict}, since {now - lk.screen_changed_at:.1f}s ago "
                   f"(the sidecar saw {published[0]} since {now - published[1]:.1f}s ago)")
    for name, rep in (("hook report", lk.hook), ("session file", lk.session)):
        if rep is None:
            refused = origin.refusal(lk.info.report, lk.info.launch) if name == "hook report" else None
            out.append(f"{name}: {refused or 'none'}")
        else:
            out.append(f"{name}: {rep.state} ({now - rep.at:.1f}s ago, {rep.source}, "
                       f"{report_standing(rep, lk)})")
    out.append(f"OSC 7501: {osc_line(lk, now)}")
    st = lk.state
    why = {"screen": "the screen rules decide" if not (st and st.state == "blocked")
           else "a blocked prompt on screen always stands",
           "hook": ("the agent's own OSC record stands until it states another, and beats the "
                    "remaining screen rules" if record_decides(st) else
                    "a fresh report from the agent beats the remaining screen rules")}
    out.append(f"state: {st.state} via {st.source}"
               + (f" ({st.rule})" if st.source == "hook" else "")
               + f": {why.get(st.source, '')}" if st else "state: none")
    return out


def osc_line(lk: Look, now: float) -> str:
    """The agent's own OSC record: what it says, its age, whether it decides and why not."""
    if lk.osc is None:
        return ("none published (a sidecar reading the pane's bytes, the emulate or pipe "
                "intake, takes them; the capture intake reads no bytes)")
    rec = lk.osc.record
    st = rec.status
    said = ", ".join(x for x in (
        f"kind {st.kind}" if st.kind else "", f"msg {st.message[:80]!r}" if st.message else "",
        f"{lk.osc.children} sub-agent record(s) working or blocked (never the pane's state)"
        if lk.osc.children else "") if x)
    if record_decides(lk.state):
        standing = "in force: it decides (no expiry: the agent states each change)"
    elif lk.match is not None and lk.match.state == "blocked":
        standing = "not in force: a blocked prompt on screen stands over it"
    else:
        newer = newest(*(r for r in (lk.hook, lk.session)
                         if r is not None and report_in_force(r, lk.at, lk.screen_changed_at)))
        standing = (f"superseded: a newer report ({newer.source}, {newer.at - rec.at:.1f}s after "
                    "it) is in force" if newer is not None else "in force")
    return (f"{st.state} ({now - rec.at:.1f}s ago, {record_source(st)}"
            + (f", {said}" if said else "") + f", {standing})")


def report_standing(rep: Report, lk: Look) -> str:
    """In force, superseded or stale, by the rule `combine` applies (core/combine.py)."""
    if report_in_force(rep, lk.at, lk.screen_changed_at):
        if lk.osc is not None and lk.osc.record.at >= rep.at:
            return (f"superseded: the agent's OSC record is {lk.osc.record.at - rep.at:.1f}s "
                    "newer")
        return "in force"
    if rep.at < lk.screen_changed_at and report_in_force(rep, lk.at):
        return (f"superseded: the screen's verdict changed {lk.screen_changed_at - rep.at:.1f}s "
                "after it")
    return f"stale: older than {REPORT_LIFETIME:g}s" if lk.at - rep.at > 0 else "stale: from the future"
