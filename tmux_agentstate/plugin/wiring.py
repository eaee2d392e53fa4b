"""What we wire into the user's tmux, as Python sees it: the wiring itself is the `wire` script
beside this file (plugin.tmux and `tmux-init` both run it; it must work before the plugin's venv
exists). Here: the names it uses, how `stop --clean` takes all of it out again (the keys' saved
bindings put back, the default segment taken out) and how `doctor` checks it. Talks to tmux
only through the adapter (`Tmux.run`)."""
from __future__ import annotations

from pathlib import Path

from ..sidecar.publish import PUBLISHED_PANE_OPTIONS
from ..tmux import Tmux, TmuxError

HOOK_INDEX = 4242  # our hooks live at this index, beside the user's own
HOOKS = ("client-attached", "session-created", "client-detached")
# placeholder → what wire writes in its place
PLACEHOLDERS = {"#{agentstate}": "#{@agentstate_summary}",
                "#{agentstate_window}": "#{E:@agentstate_badge}"}
FORMAT_OPTIONS = ("status-left", "status-right", "window-status-format",
                  "window-status-current-format")
# what the sidecar publishes on a pane (the contract), then what hooks and pipes leave there
PANE_OPTIONS = PUBLISHED_PANE_OPTIONS + ("@agentstate_report", "@agentstate_pipe",
                                          "@agentstate_recording")
WINDOW_OPTIONS = ("@agentstate_window",)
GLOBAL_OPTIONS = ("@agentstate_summary", "@agentstate_badge", "@agentstate_install")
WIRE = Path(__file__).with_name("wire")  # the wiring itself (bash: plugin.tmux runs it pre-venv)
# what our key bindings and hooks run, in either form: the plugin folder's `plugin/ensure`
# (TPM) or the installed interpreter's `-m tmux_agentstate tmux-init` (pip, pipx)
MARKERS = ("plugin/ensure", "tmux_agentstate tmux-init")
# when no format holds the summary, wire prepends this to status-right and records the result
DEFAULT_SEGMENT = "#{@agentstate_summary} "
DEFAULT_SEGMENT_RECORD = "@agentstate_default_segment"
# our prefix keys: role → the option that names it (then older names for it), its default
# (wire binds the same), what it does
KEYS = {"popup": (("@agentstate-popup-key", "@agentstate-key"), "A", "opens the agent list"),
        "next": (("@agentstate-next-key",), "a", "goes to the agent that needs you most")}


def saved_key_record(role: str) -> str:
    """The global option where wire keeps "KEY<tab>the tmux command that puts back what was
    bound there before"."""
    return f"@agentstate_saved_{role}_key"


def keys(options: dict[str, str]) -> dict[str, str]:
    """role → the key it names: the user's ('' for none) or the default."""
    out = {}
    for role, (names, default, _) in KEYS.items():
        given = next((options[n] for n in names if n in options), None)
        out[role] = default if given is None else given
    return out


def global_option(tmux: Tmux, name: str) -> str:
    out = tmux.run(["show-options", "-gqv", name])
    return "\n".join(out)


def ours(command: str) -> bool:
    return any(m in command for m in MARKERS)


def hooks_present(tmux: Tmux) -> dict[str, bool]:
    lines = tmux.run(["show-hooks", "-g"])
    return {h: any(line.startswith(f"{h}[{HOOK_INDEX}]") and ours(line) for line in lines)
            for h in HOOKS}


def binding(tmux: Tmux, key: str) -> str:
    """What `prefix + key` runs (list-keys' line), "" when nothing."""
    try:
        return "\n".join(tmux.run(["list-keys", "-T", "prefix", key]))
    except TmuxError:  # no such binding (or no such key)
        return ""


def key_bound(tmux: Tmux, key: str) -> bool:
    """Bound to us, in either form."""
    line = binding(tmux, key)
    return ours(line) and ("--popup" in line or "--next" in line)


def restore_keys(tmux: Tmux) -> list[str]:
    """Put back what each of our keys replaced (wire's record), where the key is still ours."""
    done = []
    for role in KEYS:
        record = saved_key_record(role)
        key, tab, restore = global_option(tmux, record).partition("\t")
        if tab and key_bound(tmux, key):
            # the saved command is tmux's own line (list-keys) or an unbind-key: tmux parses it
            tmux.run(["run-shell", "-C", restore])
            done.append(f"key prefix + {key}: " + ("unbound" if restore.startswith("unbind-key")
                                                  else f"restored ({restore})"))
        if tab:
            tmux.run(["set-option", "-gqu", record])
    return done


def unwire(tmux: Tmux, options: dict[str, str]) -> list[str]:
    """Take out what wire (plugin.tmux, tmux-init) and the sidecar put in: the default segment,
    formats back to their placeholders, our hooks, our keys (what they replaced put back) and
    every option we write. Returns what it did, one line each."""
    done = []
    made = global_option(tmux, DEFAULT_SEGMENT_RECORD)
    if made:
        right = global_option(tmux, "status-right")
        if right == made and right.startswith(DEFAULT_SEGMENT):
            tmux.run(["set-option", "-gq", "status-right", right[len(DEFAULT_SEGMENT):]])
            done.append("status-right: the default segment taken out")
        tmux.run(["set-option", "-gqu", DEFAULT_SEGMENT_RECORD])
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
    done += restore_keys(tmux)
    for key in keys(options).values():  # ours with no record (bound by hand, or an old version)
        if key and key_bound(tmux, key):
            tmux.run(["unbind-key", "-T", "prefix", key])
            done.append(f"key prefix + {key} unbound")
    tmux.unset_everywhere(PANE_OPTIONS, WINDOW_OPTIONS, GLOBAL_OPTIONS)
    done.append("@agentstate options unset on every pane and window, and globally")
    return done


def command_off_path(exe_dir: Path | None = None) -> str | None:
    """How to run `tmux-agentstate` when it is not on PATH (TPM's venv keeps it inside the
    plugin folder): this install's executable, else `python -m`; None when PATH has it."""
    import shutil
    import sys
    if shutil.which("tmux-agentstate"):
        return None
    here = (exe_dir or Path(sys.executable).parent) / "tmux-agentstate"
    return str(here) if here.exists() else f"{sys.executable} -m tmux_agentstate"
