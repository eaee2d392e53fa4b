"""`doctor`: check tmux, Python, manifests, the plugin's wiring, the sidecar and the agent
CLIs; one line per problem with its fix."""
from __future__ import annotations

from .common import EXIT_FAIL, add_server, tmux_for


def add(sub) -> None:
    d = sub.add_parser("doctor", help="check tmux, Python, manifests, the plugin's wiring, the "
                                      "sidecar and the agent CLIs; one line per problem with its fix")
    add_server(d)
    d.set_defaults(func=cmd_doctor)


def cmd_doctor(args) -> int:
    from ..plugin.doctor import diagnose
    findings = diagnose(tmux_for(args))
    for f in findings:
        print(f.line())
    problems = sum(f.kind == "problem" for f in findings)
    print(f"{problems} problem(s)" if problems else "healthy")
    return EXIT_FAIL if problems else 0
