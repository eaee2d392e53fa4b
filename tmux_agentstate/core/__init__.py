"""The pure core: bytes → screen → rules → one state. No tmux, no processes, no sockets
(tests/test_layout.py holds it to that), so `classify`, the fixtures and every intake share it.

    vtstream.py  bytes → terminal events (the parser)
    cells/       the grid those events draw on (text only)
    screen.py    PaneScreen: one pane's emulated screen; ScreenView, what rules read
    manifest.py  one agent's identity patterns and ordered screen rules (TOML), the classifier
    answers.py   what `answer` types into each kind of dialog (a manifest's answers)
    catalog.py   the manifests in force: bundled, overridden by the user's folder
    combine.py   screen match + process + hook report → the pane's state
    origin.py    whether a hook report proves it comes from the agent launched in its pane
    fixtures.py  the committed real captures and their index
    safe_read.py reading files other programs write: regular files only, bounded, never blocking
"""
