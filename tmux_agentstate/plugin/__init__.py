"""What the tmux plugin puts into the user's tmux, and checks there.

    wiring.py   the placeholders, hooks and key plugin.tmux wires; how `stop --clean` unwires them
    popup.py    the `prefix + A` list of agent panes
    doctor.py   `doctor`: is everything in place, and if not, the fix
"""
