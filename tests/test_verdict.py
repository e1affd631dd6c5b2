"""Floors and verdict text: pass or FAIL with the figure and its bound."""

import math

import pytest

from sim2real.tasks import get_task
from sim2real.verdict import Floor, judge, parse_floor


def test_floors_pass_and_fail_with_the_figure_in_words():
    """0.91 >= 0.9 passes; 0.2 <= 0.1 fails and says so; NaN or missing fails."""
    floors = (Floor('success_rate', '>=', 0.9), Floor('error_m', '<=', 0.1))
    ok, text = judge({'success_rate': 0.91, 'error_m': 0.05}, floors)
    assert ok and text == 'pass: success_rate 0.91 >= 0.9, error_m 0.05 <= 0.1'
    ok, text = judge({'success_rate': 0.91, 'error_m': 0.2}, floors)
    assert not ok and text.startswith('FAIL: ') and 'error_m 0.2 <= 0.1 not met' in text
    assert not judge({'success_rate': math.nan, 'error_m': 0.0}, floors)[0]
    ok, text = judge({'error_m': 0.0}, floors)
    assert not ok and 'success_rate is missing' in text


def test_unknown_comparison_is_refused():
    """Only >= and <=."""
    with pytest.raises(ValueError, match='op must be'):
        Floor('x', '>', 1.0)


def test_floor_from_text_and_malformed_text_refused():
    """'m>=3.5' and 'm <= 0.1' parse; no comparison, a bare '>' or a non-number are refused
    showing the expected form."""
    assert parse_floor('rotation_rad_per_10s>=3.5') == Floor('rotation_rad_per_10s', '>=', 3.5)
    assert parse_floor('error_m <= 0.1') == Floor('error_m', '<=', 0.1)
    for bad in ('rotation 3.5', 'rotation>3.5', 'rotation>=fast', '>=3.5'):
        with pytest.raises(ValueError, match='METRIC>=VALUE'):
            parse_floor(bad)


def test_every_task_states_eval_floors():
    """The four tasks judge their evaluation; the quadrotor's corners need 0.85."""
    for name in ('quadrotor-hover', 'quadrotor-track', 'quadruped-flat', 'quadruped-rough'):
        assert get_task(name).acceptance['eval'], name
    corner = get_task('quadrotor-hover').acceptance['corner']
    assert corner == (Floor('success_rate', '>=', 0.85),)
