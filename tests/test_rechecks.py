"""rechecks.py: what no event tells is looked at in slices spread over time, each pane once per
period; a pane that printed is looked at soon, at most every BUSY_GAP, and once more after
its last bytes."""
from __future__ import annotations

from tmux_agentstate.sidecar.rechecks import BUSY_GAP, Rechecks, Rotation


def test_a_rotation_visits_each_key_once_per_period_in_slices():
    r = Rotation(10.0)
    r.keep([f"%{i}" for i in range(100)])
    assert r.take(0.0) == []  # the first call only starts the clock
    seen = []
    for step in range(1, 101):  # 10 s in sweeps of 0.1 s
        got = r.take(step * 0.1)
        assert len(got) <= 2  # a slice, never the whole set at once
        seen += got
    assert sorted(seen) == sorted(f"%{i}" for i in range(100))


def test_a_rotation_after_a_long_pause_takes_each_key_once_not_a_backlog():
    r = Rotation(10.0)
    r.keep(["%1", "%2", "%3"])
    r.take(0.0)
    assert sorted(r.take(3600.0)) == ["%1", "%2", "%3"]
    assert r.take(3600.1) == []


def test_a_rotation_follows_the_keys_as_they_change():
    r = Rotation(1.0)
    r.keep(["%1", "%2"])
    r.take(0.0)
    r.keep(["%2", "%3", "%4"])
    assert sorted(r.take(1.0)) == ["%2", "%3", "%4"]
    r.keep([])
    assert r.take(2.0) == []


def test_rechecks_look_at_watched_panes_rarely_and_the_others_often():
    rc = Rechecks()
    rc.listed([f"%{i}" for i in range(300)], ["%900", "%901", "%902"])
    looked, sized = [], []
    t = 0.0
    rc.take(t)
    while t < 30.0:
        t += 0.7
        printed, foregrounds, sizes = rc.take(t)
        assert printed == []
        looked += foregrounds
        sized += sizes
    watched = [p for p in looked if p not in ("%900", "%901", "%902")]
    others = [p for p in looked if p in ("%900", "%901", "%902")]
    assert 250 <= len(watched) <= 300 and len(set(watched)) == len(watched)
    assert 25 <= len(others) <= 32  # each about every 3 s
    assert 1650 <= len(sized) <= 1900  # each watched pane's size about every 5 s
    assert not set(sized) & {"%900", "%901", "%902"}


def test_a_pane_that_printed_is_looked_at_at_most_every_busy_gap_and_after_its_last_bytes():
    rc = Rechecks()
    rc.listed(["%1"], [])
    rc.take(0.0)
    looks = []
    t = 0.0
    while t < 5.0:  # printing at every sweep for 5 s, then quiet
        t = round(t + 0.1, 3)
        rc.printed({"%1"})
        if "%1" in rc.take(t)[0]:
            looks.append(t)
    gaps = [b - a for a, b in zip(looks, looks[1:])]
    assert looks and min(gaps) >= BUSY_GAP - 1e-9
    rc.printed({"%1"})  # its last bytes, just after a look
    last = looks[-1]
    assert "%1" not in rc.take(last + 0.05)[0]
    assert "%1" in rc.take(last + BUSY_GAP + 0.1)[0]  # looked at once more, after them
    assert "%1" not in rc.take(last + 2 * BUSY_GAP + 0.2)[0]
