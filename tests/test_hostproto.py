"""The host stream's messages: what a host sends is checked, cleaned and bounded here."""
import json

import pytest

from tmux_agentstate.core import hostproto as hp


def line(obj) -> bytes:
    return json.dumps(obj).encode()


def test_a_message_round_trips():
    msg = hp.decode(hp.encode({"t": "rows", "full": True, "rows": [{"pane": "%1"}]}))
    assert msg["v"] == hp.SCHEMA and msg["t"] == "rows"


@pytest.mark.parametrize("raw,why", [
    (b"x" * (hp.MAX_LINE + 1), "bytes"), (b"not json", "not JSON"), (b"[1]", "not an object"),
    (line({"v": 99, "t": "rows"}), "schema 99"), (line({"v": 1, "t": "exec"}), "unknown"),
    (b"[" * 100000, "not JSON"),
])
def test_a_bad_message_is_one_line(raw, why):
    with pytest.raises(hp.ProtocolError) as e:
        hp.decode(raw)
    assert why in str(e.value) and "\n" not in str(e.value)


def test_rows_are_cleaned_and_bounded():
    rows = hp.HostRows()
    hostile = {"pane": "%3", "state": "blocked", "agent": "claude", "since": 10,
               "detail": "\x1b]52;c;AAAA\x07Do you want #(rm -rf ~)?" + "x" * 500,
               "session": "s\x1b[2J", "context": 1e308, "done": "yes"}
    assert rows.apply({"full": True, "rows": [hostile, {"pane": "3", "state": "idle", "agent": "a"},
                                               {"pane": "%4", "state": "exec", "agent": "a"},
                                               {"pane": "%5", "state": "idle", "agent": "$(x)"}]})
    assert list(rows.rows) == ["%3"] and rows.dropped == 3
    r = rows.rows["%3"]
    assert "\x1b" not in r["detail"] and "\x07" not in r["detail"] and len(r["detail"]) == 200
    assert r["session"] == "s[2J" and r["context"] is None and r["done"] is False


def test_changes_and_gone_and_the_row_limit():
    rows = hp.HostRows()
    many = [{"pane": f"%{i}", "state": "idle", "agent": "codex"} for i in range(hp.MAX_ROWS + 5)]
    rows.apply({"full": True, "rows": many})
    assert len(rows.rows) == hp.MAX_ROWS and rows.dropped == 5
    assert rows.apply({"rows": [{"pane": "%0", "state": "blocked", "agent": "codex"}], "gone": ["%1"]})
    assert rows.rows["%0"]["state"] == "blocked" and "%1" not in rows.rows
    assert not rows.apply({"rows": [], "gone": ["%999999"]})


def test_requests_are_checked():
    assert hp.decode_request(line({"v": 1, "op": "answer", "id": 1, "pane": "%2", "choice": "yes"}))
    for bad in ({"v": 1, "op": "shell", "id": 1}, {"v": 1, "op": "answer", "id": 1, "pane": "x"},
                {"v": 1, "op": "answer", "id": 1, "pane": "%2", "choice": "y; rm"}):
        with pytest.raises(hp.ProtocolError):
            hp.decode_request(line(bad))
