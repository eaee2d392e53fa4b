"""Demo helpers: a fake coding agent that draws like Claude Code (`fake_agent`).

Stdlib only, so it runs anywhere tmux does: the `demo` command, benchmarks and tests use it.
"""
