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
