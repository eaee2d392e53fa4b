"""tmux-agentstate: is the coding agent in each tmux pane working, idle, or blocked on you?"""
__version__ = "0.1.0"
