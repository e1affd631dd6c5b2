"""Robustness points: nominal, edges, every corner (or a strength-3 cover), 1.25x past."""

import itertools

import pytest

from sim2real.mdp.cfg import RandomParamCfg
from sim2real.robustness import wilson_interval
from sim2real.robustness_design import BoxParam, covering_rows, design, past_value


def _box():
    """A scale centred on 1, a delay from 0 to 2 ticks, a probability from 0 to 0.3."""
    return [BoxParam('mass', RandomParamCfg('a', 1.0, 'x'), 0.8, 1.2),
            BoxParam('delay', RandomParamCfg('b', 0.0, 'ticks', integer=True), 0.0, 2.0),
            BoxParam('drop', RandomParamCfg('c', 0.0, 'p'), 0.0, 0.3)]


def test_points_of_a_three_parameter_box():
    """1 nominal + 6 edges + 8 corners + 4 past edges (bounds at nominal have none)."""
    points, name = design(_box())
    kinds = [p.kind for p in points]
    assert kinds.count('nominal') == 1 and kinds.count('edge') == 6
    assert kinds.count('corner') == 8 and name == 'full factorial'
    past = [p.pins for p in points if p.kind == 'past_edge']
    assert past == [{'mass': pytest.approx(0.75)}, {'mass': pytest.approx(1.25)},
                    {'delay': 3.0}, {'drop': pytest.approx(0.375)}]
    corners = {tuple(p.pins.values()) for p in points if p.kind == 'corner'}
    assert corners == set(itertools.product((0.8, 1.2), (0.0, 2.0), (0.0, 0.3)))
    assert points[0].pins == {'mass': 1.0, 'delay': 0.0, 'drop': 0.0}


def test_whole_numbers_past_an_edge_round_away_from_nominal():
    """Delay edges 2 and 3 ticks: 2.5 -> 3, 3.75 -> 4; a scale 0.9-1.1 -> 0.875, 1.125."""
    delay = BoxParam('d', RandomParamCfg('p', 0.0, 'ticks', integer=True), 0.0, 3.0)
    assert past_value(delay, 2.0) == 3.0 and past_value(delay, 3.0) == 4.0
    kp = BoxParam('kp', RandomParamCfg('p', 1.0, 'x'), 0.9, 1.1)
    assert past_value(kp, 0.9) == pytest.approx(0.875)
    assert past_value(kp, 1.1) == pytest.approx(1.125)


@pytest.mark.parametrize('k', [4, 9, 12])
def test_covering_design_meets_every_triple_of_bounds(k):
    """Every 3 columns show all 8 combinations, with far fewer rows than 2^k for k >= 9."""
    rows = covering_rows(k)
    for cols in itertools.combinations(range(k), 3):
        seen = {tuple(r[list(cols)]) for r in rows}
        assert len(seen) == 8, cols
    if k >= 9:
        assert len(rows) < 2 ** k / 10


def test_too_many_corners_switch_to_the_covering_design():
    """max_corners 4 with 3 parameters (8 corners): a strength-3 cover is all 8 anyway."""
    points, name = design(_box(), max_corners=4)
    assert name == 'strength-3 covering design'
    assert sum(p.kind == 'corner' for p in points) == 8


def test_wilson_interval():
    """29 of 32: 0.906 with a 95 % interval of about 0.76 - 0.97."""
    low, high = wilson_interval(29, 32)
    assert low == pytest.approx(0.758, abs=0.005) and high == pytest.approx(0.968, abs=0.005)
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == 1.0


def test_too_few_episodes_for_a_rate_floor_are_named():
    """fall_rate <= 0.02 needs 50 episodes; success >= 0.85 at 32 allows 4 failures."""
    from sim2real.tasks import get_task
    from sim2real.robustness import resolution_warnings
    quad = resolution_warnings(get_task('quadruped-flat').acceptance, 16)
    assert any('fall_rate <= 0.02' in w and '--episodes >= 50' in w for w in quad)
    assert resolution_warnings(get_task('quadruped-flat').acceptance, 50) == []
    assert resolution_warnings(get_task('quadrotor-hover').acceptance, 32) == []
