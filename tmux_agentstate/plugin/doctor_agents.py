"""`doctor`'s look at the agent CLIs: each manifest's program on PATH, its release, and whether
the fixtures cover that release."""
from __future__ import annotations

import shutil

from .. import procs
from ..core.catalog import Catalog
from .finding import Finding


def check_agents(catalog: Catalog) -> list[Finding]:
    out = []
    for name in catalog.names():
        m = catalog.get(name)
        if m.identify.commands:
            out.append(_by_command(m, m.identify.commands[0]))
        elif m.identify.cmdline:
            out.append(_by_cmdline(m, name))
    return out


def _by_command(m, command: str) -> Finding:
    path, version = procs.installed_version(command)
    if path is None:
        return Finding("note", f"{command}: not on PATH")
    if version is None:
        return Finding("note", f"{command} ({path}): did not tell its version")
    return _covered(m, command, version, path)


def _by_cmdline(m, name: str) -> Finding:
    """An agent known by its command line only (a Python console script, e.g. Hermes Agent, whose
    bare name is also another program's): the program PATH has under the manifest's name counts
    only if the process it starts is this agent's; its release from the venv's dist-info,
    without starting it (a slow import)."""
    found = shutil.which(name)
    if found and not m.identify.matches_process(*procs.would_run(found)):
        return Finding("note", f"{name} ({found}): another program of that name, "
                               f"not {m.display or name}")
    version = procs.script_version(found) if found else None
    return _covered(m, name, version, found) if version else _by_command(m, name)


def _covered(m, command: str, version: str, path: str) -> Finding:
    """What doctor says of an agent CLI at `version` found at `path`."""
    if m.identity_only:
        return Finding("ok", f"{command} {version} ({path}): identity only, its "
                             "state comes from its own reports (OSC 7501, hooks)")
    if version in m.tested or not m.tested:
        return Finding("ok", f"{command} {version} ({path}): the fixtures cover it")
    return Finding("note", f"{command} {version} ({path}): the fixtures cover "
                           f"{', '.join(m.tested)}; a changed dialog may be missed")
