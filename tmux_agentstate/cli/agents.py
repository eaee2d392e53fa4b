"""Commands the agents' side runs: `hook` (an agent's hook event), `launch` (an agent with our
hooks injected for this launch)."""
from __future__ import annotations

import argparse

from .common import EXIT_FAIL, CliError, command


def add(sub) -> None:
    h = command(sub, "hook", "record an agent's hook event for $TMUX_PANE (prints {})",
                "echo '{\"tool_name\": \"Bash\"}' | tmux-agentstate hook claude Notification")
    h.add_argument("agent", help="the agent's manifest name (claude, codex, …)")
    h.add_argument("event", nargs="?", default="", help="the agent's name for the hook event")
    h.add_argument("payload", nargs="*", help="a JSON payload given as an argument (Codex notify)")
    h.set_defaults(func=cmd_hook)
    la = command(sub, "launch", "start an agent with our hooks injected for this launch",
                 "tmux-agentstate launch claude", "tmux-agentstate launch codex --model o3")
    la.add_argument("--status-shim", action="store_true",
                    help="run the agent behind a pty shim that answers its OSC 7501 status query, "
                         "so it reports its own state (Claude Code)")
    la.add_argument("agent", help="the agent's manifest name (claude, codex, …)")
    la.add_argument("args", nargs=argparse.REMAINDER, help="passed to the agent as they are")
    la.set_defaults(func=cmd_launch)


def cmd_hook(args) -> int:
    from ..hooks import report
    return report.main([args.agent, args.event, *args.payload])


def cmd_launch(args) -> int:
    from ..hooks.launch import LaunchError, launch
    try:
        launch(args.agent, args.args, status_shim=args.status_shim)
    except LaunchError as e:
        raise CliError(str(e)) from None
    return EXIT_FAIL  # not reached: launch() execs the agent
