"""`sim2real gap`'s computation (sim2real/sysid/gap.py) on a flight of the HIL twin as the
robot (tests/tasks/test_quadrotor_sysid.py): near 0 with the robot's true parameters, past
0.5 with the nominal ones; windows only where the policy was in control; parameters the
plant does not take, and a log with no span to replay, refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sim2real.onnx_io import read_contract
from sim2real.sysid.flight import Flight, Stream
from sim2real.sysid.gap import gap, window_starts
from tests.tasks.test_quadrotor_sysid import _flight, TRUE

POLICY = Path(__file__).resolve().parents[2] / 'policies' / 'quadrotor_hover.onnx'


@pytest.fixture(scope='module')
def flight() -> Flight:
    """The twin's 3 s flight as a log would give it, in control from 0.2 s on."""
    measured, commands = _flight()
    odom = Stream(measured.t_s, {'pos_w': measured.pos_w, 'quat_wxyz': measured.quat_wxyz,
                                 'lin_vel_b': measured.lin_vel_b,
                                 'ang_vel_b': np.zeros_like(measured.ang_vel_b)})
    imu = Stream(measured.t_s, {'ang_vel_b': measured.ang_vel_b})
    states = ['soft_start' if t < 0.2 else 'active' for t in commands.t_s]
    return Flight({'odom': odom, 'imu': imu}, commands.t_s, commands.values, states,
                  read_contract(POLICY))


def test_the_true_parameters_close_the_gap(flight):
    """Nominal: gap > 0.5 (position and velocity worse than holding still); true: < 0.02,
    every signal's below 0.05."""
    nominal = gap(flight, 'quadrotor-hover', window_s=0.3, count=20)
    true = gap(flight, 'quadrotor-hover', TRUE, window_s=0.3, count=20)
    assert nominal.gap > 0.5 and true.gap < 0.02, (nominal.as_dict(), true.as_dict())
    assert all(s.normalized < 0.05 for s in true.signals.values())
    assert true.windows == 20 and true.as_dict()['params'] == TRUE


def test_windows_lie_in_control_with_their_warm_up_before_them(flight):
    """Every window starts >= 1 s (the warm-up) after the policy took control and ends
    inside the log."""
    times = flight.streams['odom'].t_s
    starts = window_starts(flight, times, 0.3, 20, 1.0)
    assert len(starts) == 20
    assert times[starts].min() >= 1.2 and times[starts].max() <= flight.tick_t_s[-1] - 0.3


def test_what_gap_cannot_do_is_refused(flight):
    """A parameter the plant does not take (a quadruped's) and a log never in control."""
    with pytest.raises(ValueError, match=r"\['payload_kg'\] are not those of"):
        gap(flight, 'quadrotor-hover', {'payload_kg': 1.0})
    idle = Flight(flight.streams, flight.tick_t_s, flight.commands,
                  ['inactive'] * len(flight.states), flight.contract)
    with pytest.raises(ValueError, match='never active'):
        gap(idle, 'quadrotor-hover')


@pytest.mark.parametrize('params, message', [
    ({'thrust_scale': 0.0}, 'thrust_scale=0: the quadrotor-hover plant takes 0.1 to 10'),
    ({'mass_scale': -1.0}, 'mass_scale=-1'),
    ({'action_delay_ticks': 2.5}, 'action_delay_ticks=2.5: must be a whole number'),
])
def test_values_the_plant_cannot_take_are_refused(flight, params, message):
    """A zero thrust, a negative mass, half a tick: refused naming the bound."""
    with pytest.raises(ValueError, match=message):
        gap(flight, 'quadrotor-hover', params)


def test_a_rotor_speed_policy_and_a_log_without_odometry_are_refused(flight):
    """The plant replays thrust and body-rate commands from odometry: it says so."""
    import dataclasses
    contract = dataclasses.replace(
        flight.contract, action=dataclasses.replace(flight.contract.action, kind='rotor_speeds'))
    speeds = Flight(flight.streams, flight.tick_t_s, flight.commands, flight.states, contract)
    with pytest.raises(ValueError, match='replays thrust_body_rates commands'):
        gap(speeds, 'quadrotor-hover')
    blind = Flight({'imu': flight.streams['imu']}, flight.tick_t_s, flight.commands,
                   flight.states, flight.contract)
    with pytest.raises(ValueError, match='needs the odom stream; the log has imu'):
        gap(blind, 'quadrotor-hover')


def test_no_window_reaches_over_a_pause_and_any_window_length_lines_up(flight):
    """Samples missing for 50 ms at 2 s (a stalled simulator): no window or warm-up spans
    it; a 10.5 ms window (off the 2 ms physics grid) compares as many samples as it
    predicts."""
    times = flight.streams['odom'].t_s
    paused = times.copy()
    paused[times >= 2.0] += 0.05
    starts = window_starts(flight, paused, 0.3, 40, 1.0)
    for t in paused[starts]:
        assert not (t < 2.05 <= t + 0.3 + 1e-9) and not (t - 1.0 < 2.05 <= t)
    assert gap(flight, 'quadrotor-hover', TRUE, window_s=0.0105, count=10).gap < 0.05
