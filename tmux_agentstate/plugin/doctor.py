"""`tmux-agentstate doctor`: is everything in place for this tmux server, and if not, what to do.

Each check gives findings: `ok` and `note` lines inform, a `problem` carries its fix. The
command exits 0 only when there is no problem. Checks that need the server say so when there
is none and the rest still run (Python, manifests, agent CLIs).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from .. import procs
from . import wiring
from .doctor_agents import check_agents
from .finding import Finding
from ..core.catalog import BUNDLED_DIR, Catalog, user_dir
from ..sidecar.runtime import Runtime, unsafe
from ..tmux import Tmux, TmuxError

POPUP_TMUX = (3, 2)  # display-popup, and the control client's ignore-size/no-output flags


def _version_tuple(text: str) -> tuple[int, ...]:
    import re
    m = re.search(r"(\d+)\.(\d+)", text)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def check_versions(tmux: Tmux | None) -> list[Finding]:
    out = [Finding("ok" if sys.version_info >= (3, 9) else "problem",
                   f"Python {sys.version.split()[0]} ({sys.executable})",
                   "" if sys.version_info >= (3, 9) else "install Python 3.9 or newer")]
    if tmux is None:
        return out
    version = tmux.run(["display-message", "-p", "#{version}"])[0]
    if _version_tuple(version) >= POPUP_TMUX:
        out.append(Finding("ok", f"tmux {version}"))
    else:
        out.append(Finding("note", f"tmux {version} is older than 3.2: no popup (prefix + A shows "
                                   "a message; use `tmux-agentstate list`), and one tmux process "
                                   "per sidecar call instead of a control-mode client (more CPU)"))
    return out


def check_manifests(catalog: Catalog) -> list[Finding]:
    out = []
    for name in catalog.names():
        m = catalog.get(name)
        source = catalog.source(name)
        text = f"manifest {name} v{m.version} ({source}: {m.path})"
        if source == "user" and (BUNDLED_DIR / f"{name}.toml").exists():
            text += f", overrides the bundled {name}"
        out.append(Finding("ok", text))
    if not catalog.names():
        out.append(Finding("problem", f"no manifests loaded (looked in {BUNDLED_DIR})",
                           "reinstall tmux-agentstate: this install lacks its bundled manifests"))
    for error in catalog.errors:
        out.append(Finding("problem", f"manifest error: {error}",
                           "correct the file; until then its last good version (if any) runs"))
    return out


def check_plugin(tmux: Tmux, options: dict[str, str]) -> list[Finding]:
    out = []
    install = wiring.global_option(tmux, "@agentstate_install")
    if install.startswith("failed: "):
        # plugin/ensure says "cause: fix" in one line
        cause, _, fix = install[len("failed: "):].partition(": ")
        out.append(Finding("problem", f"the plugin's install failed: {cause}",
                           fix or "see the plugin's install log, then reload tmux.conf"))
    elif install == "installing":
        out.append(Finding("note", "the plugin is installing its environment now"))
    summary_in = [n for n in ("status-left", "status-right")
                  if wiring.PLACEHOLDERS["#{agentstate}"] in wiring.global_option(tmux, n)]
    raw_in = [n for n in wiring.FORMAT_OPTIONS
              if any(p in wiring.global_option(tmux, n) for p in wiring.PLACEHOLDERS)]
    if raw_in:
        out.append(Finding("problem", f"{', '.join(raw_in)} still hold(s) a #{{agentstate…}} "
                                      "placeholder that the plugin did not interpolate",
                           "set these options before TPM's `run` line in tmux.conf (or run "
                           "plugin.tmux after them), then reload tmux.conf"))
    elif (wiring.global_option(tmux, wiring.DEFAULT_SEGMENT_RECORD)
          == wiring.global_option(tmux, "status-right")):
        out.append(Finding("ok", "the summary is at the start of status-right (the default "
                                 "segment; place #{agentstate} yourself, or set -g "
                                 "@agentstate-default-segment off for none)"))
    elif summary_in:
        out.append(Finding("ok", f"#{{agentstate}} interpolated in {', '.join(summary_in)}"))
    else:
        out.append(Finding("problem", "the summary is in neither status-left nor status-right",
                           "add #{agentstate} to one, e.g. set -g status-right '#{agentstate} "
                           "%H:%M', before TPM's `run` line (or unset "
                           "@agentstate-default-segment for the default one)"))
    badge_in = [n for n in wiring.FORMAT_OPTIONS[2:]
                if wiring.PLACEHOLDERS["#{agentstate_window}"] in wiring.global_option(tmux, n)]
    if badge_in:
        out.append(Finding("ok", f"#{{agentstate_window}} interpolated in {', '.join(badge_in)}"))
    elif not raw_in:
        out.append(Finding("note", "no window badge: add #{agentstate_window} to "
                                   "window-status-format to see each window's state"))
    out += check_keys(tmux, options)
    missing = [h for h, present in wiring.hooks_present(tmux).items() if not present]
    if missing:
        out.append(Finding("problem", f"hook(s) missing: {', '.join(missing)} (they start the "
                                      "sidecar and bring it back when it dies)",
                           LOAD_FIX))
    else:
        out.append(Finding("ok", f"hooks {', '.join(wiring.HOOKS)} at index {wiring.HOOK_INDEX}"))
    return out


LOAD_FIX = ("load the plugin: run-shell /path/to/tmux-agentstate/plugin.tmux (TPM), or "
            "run-shell 'tmux-agentstate tmux-init' (pip, pipx), in tmux.conf")


def check_keys(tmux: Tmux, options: dict[str, str]) -> list[Finding]:
    """Each of our prefix keys: ours, none asked for, or left to the user's own binding."""
    out = []
    for role, key in wiring.keys(options).items():
        names, _, what = wiring.KEYS[role]
        if not key:
            out.append(Finding("note", f"no key {what} ({names[0]} is ''): run "
                                       f"tmux-agentstate {role} instead"))
            continue
        bound = wiring.binding(tmux, key)
        if wiring.key_bound(tmux, key):
            out.append(Finding("ok", f"prefix + {key} {what}"))
        elif bound:
            command = bound.split(f" {key} ", 1)[-1].strip() if f" {key} " in bound else bound
            # the user's own binding is their choice, not a fault: said, with how to pick
            # another key, but doctor stays healthy
            out.append(Finding("note", f"prefix + {key} is yours ({command}): left alone, so "
                                          f"no key {what}",
                               f"pick another: set -g {names[0]} X (or '' for none), then "
                               "reload tmux.conf"))
        else:
            out.append(Finding("problem", f"prefix + {key} is not bound (it {what})",
                               f"if {key!r} is not a tmux key name (C-a, M-x, F5, A…), set -g "
                               f"{names[0]} to one; else {LOAD_FIX}"))
    return out


def check_command(exe_dir: Path | None = None) -> list[Finding]:
    """Where the `tmux-agentstate` command is: TPM's venv keeps it off PATH."""
    import shutil
    off_path = wiring.command_off_path(exe_dir)
    if off_path is None:
        return [Finding("ok", f"tmux-agentstate command: {shutil.which('tmux-agentstate')}")]
    if not off_path.endswith(" -m tmux_agentstate"):
        return [Finding("note", f"tmux-agentstate is not on PATH; it is {off_path}",
                        f"ln -s {off_path} ~/.local/bin/tmux-agentstate (or call it by that path)")]
    return [Finding("note", f"tmux-agentstate is not on PATH; run it as {off_path}")]


def check_options(options: dict[str, str]) -> list[Finding]:
    """Each `@agentstate-*` option the sidecar cannot use as set (it runs with the default), and
    each one no part of tmux-agentstate reads (a typo), with the closest known name."""
    from ..sidecar.config import Config
    problems = Config.from_tmux(options).problems
    if not problems:
        named = sum(1 for name in options if name.startswith("@agentstate-"))
        return [Finding("ok", f"@agentstate-* options: {named} set, all valid")] if named else []
    return [Finding("problem", p.line(), p.fix()) for p in problems]


def check_sidecar(tmux: Tmux) -> list[Finding]:
    out = []
    runtime = Runtime(tmux.socket())
    for folder in (runtime.dir.parent, runtime.dir):
        why = unsafe(folder) if os.path.lexists(folder) else None
        if why:
            out.append(Finding("problem", f"runtime folder unsafe: {why}",
                               f"remove {folder} (the sidecar makes it again, private)"))
    if not any(f.kind == "problem" for f in out):
        out.append(Finding("ok", f"runtime folder {runtime.dir} is private"))
    pid = runtime.running_pid() if runtime.dir.is_dir() else None
    if pid:
        out.append(Finding("ok", f"sidecar running (pid {pid}), log {runtime.log_path}"))
        for fault in (runtime.read_status() or {}).get("rule_faults", []):
            out.append(Finding("problem", f"manifest rule {fault}",
                               "make the pattern cheaper (no nested repeats such as (a+)+); "
                               "saving the file enables the rule again"))
    elif runtime.stopped_path.exists():
        out.append(Finding("problem", "the sidecar was stopped (tmux-agentstate stop)",
                           f"tmux-agentstate start -S {tmux.socket()}"))
    else:
        out.append(Finding("problem", "no sidecar runs for this server: pane states are not "
                                      "kept up to date",
                           f"tmux-agentstate start -S {tmux.socket()} (see its log: "
                           f"{runtime.log_path})"))
    out += check_watcher_down(runtime, pid) + check_hosts(runtime, pid)
    last_error = _last_error(runtime.log_path)
    if last_error:
        out.append(Finding("note", f"the sidecar log's last error: {last_error}"))
    return out


def check_hosts(runtime: Runtime, pid: int | None) -> list[Finding]:
    """A line per remote host whose link is not connected, with its why and fix (the why is
    the fix: each says what to do)."""
    from ..sidecar.hosts import files
    hosts = files.read_hosts(runtime.dir) if pid else []
    bad = [h for h in hosts if h.get("status") != "connected"]
    out = []
    for h in bad:
        why = h.get("why") if isinstance(h.get("why"), str) else ""
        text = f"remote host {h['host']}: {h.get('status', '?')}" + (f": {why}" if why else "")
        if h.get("status") == "connecting":
            out.append(Finding("note", text))
        elif h.get("status") == "stale":
            out.append(Finding("problem", text, f"its rows are old until it answers again; "
                                                f"check it with ssh {h['host']} true (the link "
                                                "reconnects by itself)"))
        else:
            out.append(Finding("problem", text, "as it says; the link tries again by itself "
                                                "(tmux-agentstate hosts shows it)"))
    if hosts and not bad:
        out.append(Finding("ok", f"remote hosts: {len(hosts)} connected"))
    return out


def check_watcher_down(runtime: Runtime, pid: int | None) -> list[Finding]:
    """The whole reason behind the status segment's short "watcher down (doctor)"."""
    try:
        why = runtime.down_path.read_text().strip() if not pid else ""
    except OSError:
        why = ""
    if not why:
        return []
    return [Finding("problem", f"{why} (the status line says: watcher down)",
                    f"see the log's last error below, then tmux-agentstate start -S "
                    f"{runtime.socket_path}")]


STATUS_WAIT = 8.0  # seconds to wait for a status that lists a pane an agent just started in
                   # (the sidecar lists panes every 5 s and writes its status after)


def agent_panes(tmux: Tmux, catalog: Catalog) -> dict[str, tuple[str, str]]:
    """The panes whose foreground is an agent now, as the sidecar identifies them (the
    catalog's rules over the tty's foreground process): pane id → (address, agent)."""
    panes, _ = tmux.panes_and_clients()
    found = {}
    for info in panes:
        if info.dead:
            continue
        manifest = catalog.for_foreground(procs.foreground(info.pane_pid))
        if manifest is not None:
            found[info.pane_id] = (info.address, manifest.name)
    return found


def check_watching(tmux: Tmux, catalog: Catalog) -> list[Finding]:
    """A running sidecar is no proof of a watched pane: compare the panes its status file
    says it watches with the panes whose foreground is an agent now; a status not written
    for long is a frozen sidecar; an install changed under it means it runs stale code."""
    import time

    from ..sidecar import install
    runtime = Runtime(tmux.socket())
    pid = runtime.running_pid() if runtime.dir.is_dir() else None
    if not pid:
        return []  # check_sidecar says it is down, and what to do
    restart = (f"tmux-agentstate stop -S {tmux.socket()} && tmux-agentstate start -S "
               f"{tmux.socket()} (its log: {runtime.log_path})")
    asked = time.time()
    status = runtime.read_status() or {}
    deadline = time.monotonic() + STATUS_WAIT
    while status.get("pid") != pid and time.monotonic() < deadline:  # just started
        time.sleep(0.2)
        status = runtime.read_status() or {}
    if status.get("pid") != pid:
        return [Finding("problem", f"the sidecar (pid {pid}) has written no status in "
                                   f"{STATUS_WAIT:.0f}s: it is stuck or frozen", restart)]
    out = []
    heartbeat = float(status.get("heartbeat") or install.HEARTBEAT)
    limit = max(15.0, 3 * heartbeat)
    age = asked - float(status.get("updated") or 0)
    if age > limit:  # or the machine just woke from sleep: one more heartbeat's time
        deadline = time.monotonic() + heartbeat + 2
        while time.monotonic() < deadline:
            fresh = runtime.read_status() or {}
            if fresh.get("pid") == pid and float(fresh.get("updated") or 0) > asked:
                status, age = fresh, 0.0
                break
            time.sleep(0.5)
    frozen = age > limit
    if frozen:
        out.append(Finding("problem", f"the sidecar (pid {pid}) last wrote its status {age:.0f}s "
                                      f"ago (every {heartbeat:.0f}s when alive): it is frozen "
                                      "or stopped (SIGSTOP), its panes' states are old", restart))
    theirs = install.Install.from_dict(status.get("install") or {})
    why = install.changed(theirs) if theirs else "it does not say what it runs from (an " \
        "older version)"
    if why and theirs and install.installing(theirs.prefix):
        out.append(Finding("note", f"the sidecar (pid {pid}) runs code being replaced: "
                                   f"{theirs.prefix} is being rebuilt (an update); a sidecar "
                                   "from it takes over when it is done"))
    elif why:
        out.append(Finding("problem", f"the sidecar (pid {pid}) runs stale code: {why}",
                           f"tmux-agentstate start --replace -S {tmux.socket()} (or reload "
                           "tmux.conf)"))
    elif theirs and theirs.python != sys.executable:
        out.append(Finding("note", f"the sidecar runs from {theirs.python}, this command from "
                                   f"{sys.executable}"))
    agents = agent_panes(tmux, catalog)

    def unwatched() -> list[str]:
        return sorted(set(agents) - {p.get("pane") for p in status.get("panes", [])},
                      key=lambda p: int(p.lstrip("%")) if p.lstrip("%").isdigit() else 0)

    missing = unwatched()
    deadline = time.monotonic() + STATUS_WAIT
    while missing and not frozen and time.monotonic() < deadline:
        time.sleep(0.5)  # an agent that just started: its first listing comes within seconds
        status = runtime.read_status() or status
        agents = {p: a for p, a in agent_panes(tmux, catalog).items() if p in agents}
        missing = unwatched()
    for pane_id in missing:
        address, agent = agents[pane_id]
        out.append(Finding("problem", f"{pane_id} ({address}) runs {agent}, but the sidecar "
                                      "does not watch it: its state is not shown", restart))
    if agents and not missing and not frozen:
        out.append(Finding("ok", f"the sidecar watches every agent pane ({len(agents)})"))
    elif not agents:
        out.append(Finding("ok", "no agent runs in a pane now"))
    return out


def _last_error(log: Path) -> str | None:
    try:
        with open(log, "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - (256 << 10)))
            lines = f.read().decode(errors="replace").splitlines()
    except OSError:
        return None
    errors = [line for line in lines if " ERROR " in line]
    return errors[-1][:300] if errors else None


def diagnose(tmux: Tmux, catalog: Catalog | None = None) -> list[Finding]:
    catalog = catalog or Catalog()
    try:
        options = tmux.global_options()
    except TmuxError as e:
        findings = check_versions(None)
        findings.append(Finding("problem", f"no tmux server at {tmux.label}: {e}",
                                "start tmux, or name the server with -L NAME / -S PATH"))
        return findings + check_manifests(catalog) + check_agents(catalog)
    return (check_versions(tmux) + check_command() + check_manifests(catalog)
            + check_plugin(tmux, options) + check_options(options)
            + check_sidecar(tmux) + check_watching(tmux, catalog) + check_agents(catalog)
            + [Finding("note", f"user manifests folder: {user_dir()}")])
