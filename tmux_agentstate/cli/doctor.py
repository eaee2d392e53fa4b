"""`doctor`: check tmux, Python, manifests, the plugin's wiring, the sidecar and the agent
CLIs; one line per problem with its fix."""
from __future__ import annotations

from .common import EXIT_FAIL, add_server, command, say, tmux_for


def add(sub) -> None:
    d = command(sub, "doctor", "check tmux, Python, manifests, the plugin's wiring, the sidecar "
                               "and the agent CLIs; one line per problem with its fix",
                "tmux-agentstate doctor", "tmux-agentstate doctor -L work")
    add_server(d)
    d.set_defaults(func=cmd_doctor, outside_tmux_ok=True)  # says itself when no server runs


def cmd_doctor(args) -> int:
    from ..plugin.doctor import diagnose
    findings = diagnose(tmux_for(args))
    for f in findings:
        say(f.line())
    problems = sum(f.kind == "problem" for f in findings)
    say(f"{problems} problem(s)" if problems else "healthy")
    return EXIT_FAIL if problems else 0
