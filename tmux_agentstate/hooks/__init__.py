"""The agents' own reports, beside what their screens show.

    launch.py   `launch AGENT`: runs the agent with our hooks injected for that launch only
    status_shim.py  `launch --status-shim`: the agent behind a pty that answers its OSC 7501 query
    shim_keeper.py  that pty's session leader (job control) and the agent's start on it
    report.py   what one hook event records on its pane (run as `python -m tmux_agentstate.hook`)
    context.py  the context window in use, from the files Claude Code and Codex write anyway
"""
