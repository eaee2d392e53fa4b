"""One pane, right now, without the sidecar.

    fresh.py    a fresh look: its screen, agent and state (`explain`; `send` and `answer` look
                again before they type)
    record.py   `record`: its raw output bytes, for a new fixture
"""
