"""`python -m tmux_agentstate.hook AGENT EVENT`: the command line agents' hooks run (see
hooks/report.py). It stays at this path because launch writes it into the agents' hook
settings, and it imports nothing but that module so a hook costs little."""
from .hooks.report import main

if __name__ == "__main__":
    raise SystemExit(main())
