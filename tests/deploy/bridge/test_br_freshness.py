"""Freshness: which sends were fresh, and the last fresh send by a past instant."""

import math

from sim2real.deploy.bridge.freshness import Freshness


def odom(x):
    """A sample with one value x."""
    return {'x': [x, 0.0]}


def test_repeated_stamps_and_nan_are_not_fresh():
    """A repeated or older stamp, or any NaN, is not fresh and moves nothing."""
    f = Freshness()
    assert f.observe('odom', odom(1.0), 10.0, sent_s=100.0)
    assert not f.observe('odom', odom(2.0), 10.0, sent_s=100.1)
    assert not f.observe('odom', odom(2.0), 9.0, sent_s=100.2)
    assert not f.observe('odom', odom(math.nan), 11.0, sent_s=100.3)
    assert f.last_sent() == {'odom': 100.0}
    assert f.observe('odom', odom(3.0), 11.0, sent_s=100.4)
    assert f.last_sent() == {'odom': 100.4}


def test_sent_by_answers_for_the_onset_not_for_now():
    """Sends after an onset (found before them, reported after) do not count at the onset:
    odom fresh at 1.000 and 1.002, onset at 1.001 -> 1.000; imu never sent -> left out."""
    f = Freshness()
    f.observe('odom', odom(1.0), 1.0, sent_s=1.000)
    f.observe('odom', odom(1.0), 2.0, sent_s=1.002)
    assert f.sent_by(1.001) == {'odom': 1.000}
    assert f.sent_by(1.002) == {'odom': 1.002}
    assert f.sent_by(0.5) == {}
    assert f.last_sent() == {'odom': 1.002}


def test_history_is_bounded():
    """Only the last `history` fresh sends are kept: older instants find none."""
    f = Freshness(history=3)
    for k in range(5):
        f.observe('imu', odom(1.0), float(k), sent_s=float(k))
    assert f.sent_by(1.5) == {}
    assert f.sent_by(2.5) == {'imu': 2.0}
