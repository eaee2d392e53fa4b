"""What plugin.tmux wires into the user's tmux, in one place: the placeholders it expands, the
hooks and the popup key; how `stop --clean` takes all of it out again and how `doctor` checks
it. Talks to tmux only through the adapter (`Tmux.run`)."""
from __future__ import annotations

from ..tmux import Tmux, TmuxError

HOOK_INDEX = 4242  # plugin.tmux's hooks live at this index, beside the user's own
HOOKS = ("client-attached", "session-created", "client-detached")
# placeholder → what plugin.tmux writes in its place
PLACEHOLDERS = {"#{agentstate}": "#{@agentstate_summary}",
                "#{agentstate_window}": "#{E:@agentstate_badge}"}
FORMAT_OPTIONS = ("status-left", "status-right", "window-status-format",
                  "window-status-current-format")
# what the sidecar publishes on a pane (the contract), then what hooks and pipes leave there
PUBLISHED_PANE_OPTIONS = ("@agentstate", "@agentstate_agent", "@agentstate_since",
                          "@agentstate_source", "@agentstate_detail", "@agentstate_seen",
                          "@agentstate_agent_version", "@agentstate_done",
                          "@agentstate_error", "@agentstate_context", "@agentstate_screen")
PANE_OPTIONS = PUBLISHED_PANE_OPTIONS + ("@agentstate_report", "@agentstate_pipe",
                                          "@agentstate_recording")
WINDOW_OPTIONS = ("@agentstate_window",)
GLOBAL_OPTIONS = ("@agentstate_summary", "@agentstate_badge", "@agentstate_install")
ENSURE = "plugin/ensure"  # what our key bindings and hooks run
# our prefix keys: the option that names each, its default (plugin.tmux binds the same), what
# it does
KEYS = {"@agentstate-key": ("A", "opens the agent list"),
        "@agentstate-next-key": ("a", "goes to the agent that needs you most")}


def keys(options: dict[str, str]) -> dict[str, str]:
    """option → the key it names, the user's or the default."""
    return {name: options.get(name) or default for name, (default, _) in KEYS.items()}


def global_option(tmux: Tmux, name: str) -> str:
    out = tmux.run(["show-options", "-gqv", name])
    return "\n".join(out)


def hooks_present(tmux: Tmux) -> dict[str, bool]:
    lines = tmux.run(["show-hooks", "-g"])
    return {h: any(line.startswith(f"{h}[{HOOK_INDEX}]") and ENSURE in line for line in lines)
            for h in HOOKS}


def key_bound(tmux: Tmux, key: str) -> bool:
    try:
        lines = tmux.run(["list-keys", "-T", "prefix", key])
    except TmuxError:  # no such binding
        return False
    return any(ENSURE in line for line in lines)


def unwire(tmux: Tmux, options: dict[str, str]) -> list[str]:
    """Take out what plugin.tmux and the sidecar put in: formats back to their placeholders,
    our hooks, our key binding and every option we write. Returns what it did, one line each."""
    done = []
    for name in FORMAT_OPTIONS:
        value = original = global_option(tmux, name)
        for placeholder, expansion in PLACEHOLDERS.items():
            value = value.replace(expansion, placeholder)
        if value != original:
            tmux.run(["set-option", "-gq", name, value])
            done.append(f"{name}: placeholders restored")
    for hook, present in hooks_present(tmux).items():
        if present:
            tmux.run(["set-hook", "-gu", f"{hook}[{HOOK_INDEX}]"])
            done.append(f"hook {hook}[{HOOK_INDEX}] removed")
    for key in keys(options).values():
        if key_bound(tmux, key):
            tmux.run(["unbind-key", "-T", "prefix", key])
            done.append(f"key prefix + {key} unbound")
    tmux.unset_everywhere(PANE_OPTIONS, WINDOW_OPTIONS, GLOBAL_OPTIONS)
    done.append("@agentstate options unset on every pane and window, and globally")
    return done
