"""The quadrotor's identification plant (tasks/quadrotor/sysid.py) against the HIL twin as
the robot: a flight of a vehicle 20 % heavier, with 20 % less thrust, 40 % slower motors
and 2 ticks of command delay, replayed in 0.3 s windows from its measured states, is matched
to the millimetre with its true parameters and missed by centimetres with the nominal ones;
each parameter alone moves the prediction."""

from __future__ import annotations

import numpy as np
import pytest

from sim2real import terms
from sim2real.assets import urdf_path
from sim2real.deploy.bridge import variant
from sim2real.deploy.robots.quadrotor.bridge_sim import QuadrotorSim
from sim2real.deploy.robots.quadrotor.variant import knobs
from sim2real.tasks.quadrotor.sysid import (
    Commands, Measured, measured_signals, NOMINAL, replay)

TRUE = {'mass_scale': 1.2, 'inertia_scale': 1.0, 'thrust_scale': 0.8, 'motor_tau_scale': 1.4,
        'action_delay_ticks': 2.0}
TICK_S, PHYSICS_S = 0.01, 0.002


def _flight(seconds: float = 3.0) -> tuple[Measured, Commands]:
    """The twin flown at 100 Hz by a levelling and height-holding controller with roll,
    pitch and yaw rate doublets and a thrust step on top; odometry at 200 Hz."""
    sim = QuadrotorSim(urdf_path('quadrotor'), 1 / PHYSICS_S, hold_until_thrust_fraction=0.0)
    on_model = {k: v for k, v in TRUE.items() if k != 'action_delay_ticks'}
    p = {'robot': 'quadrotor', 'variant': str(on_model), 'policy_tick_s': TICK_S,
         'policy_substep_s': 0.005}
    variant.apply(sim, p, knobs())
    sim.reset()
    hover_n = sim.hover_thrust_n / TRUE['thrust_scale']   # what the node would learn to ask
    ticks, commands, samples = [], [], []
    delay = int(TRUE['action_delay_ticks'])
    for k in range(int(seconds / TICK_S)):
        t = k * TICK_S
        phase = int(t / 0.25) % 8
        doublet = {1: (1.0, 0, 0), 2: (-1.0, 0, 0), 3: (0, 1.0, 0), 4: (0, -1.0, 0),
                   5: (0, 0, 1.5), 6: (0, 0, -1.5)}.get(phase, (0, 0, 0))
        state = sim.odom()
        gravity_b = terms.projected_gravity(terms.quat_to_rotmat(state['quat_wxyz']))
        rates = np.asarray(doublet) + 4.0 * np.array([gravity_b[1], -gravity_b[0], 0.0])
        climb = 2.0 * (1.5 - state['pos_w'][2]) - 1.0 * sim.data.qvel[2]
        thrust = hover_n * (1.0 + climb + (0.15 if phase == 7 else 0.0))
        ticks.append(t)
        commands.append([thrust, *rates])
        if k >= delay:
            sim.set_command('thrust_body_rates', commands[k - delay], t)
        for sub in range(int(TICK_S / PHYSICS_S)):
            sim.step(t + sub * PHYSICS_S)
            if sub % 2 == 1:
                odom = sim.odom()
                samples.append((t + (sub + 1) * PHYSICS_S, odom))
    times = np.array([s[0] for s in samples])
    stack = {name: np.array([s[1][name] for s in samples]) for name in samples[0][1]}
    return (Measured(times, stack['pos_w'], stack['quat_wxyz'], stack['lin_vel_b'],
                     stack['ang_vel_b']), Commands(np.array(ticks), np.array(commands)))


@pytest.fixture(scope='module')
def flight():
    """The measured flight, its windows and the measured signals in them."""
    measured, commands = _flight()
    # from 1 s: the motors' spin-up from rest (not in the log) has died out by then
    starts = np.flatnonzero((measured.t_s > 1.0) & (measured.t_s < 2.65))[::20]
    return measured, commands, starts, measured_signals(measured, starts, 0.3)


def _rms(params: dict, flight) -> dict[str, float]:
    """RMS error per signal of the replay with params."""
    measured, commands, starts, meas = flight
    pred = replay(measured, commands, TICK_S, starts, 0.3, params)
    return {k: float(np.sqrt(np.mean(np.concatenate(
        [p - q for p, q in zip(pred[k], meas[k])]) ** 2))) for k in pred}


def test_the_true_parameters_replay_the_flight_and_the_nominal_ones_do_not(flight):
    """True: position within 0.5 mm, velocity 3 mm/s, attitude 0.5 mrad, rates 5 mrad/s RMS
    over the windows (measured 0.11 mm, 0.8 mm/s, 0.08 mrad, 0.6 mrad/s); nominal: at least
    100x worse in every signal (measured 57 mm, 0.49 m/s, 25 mrad, 0.2 rad/s)."""
    true, nominal = _rms(TRUE, flight), _rms(NOMINAL, flight)
    assert true['pos_w'] < 5e-4 and true['lin_vel_b'] < 3e-3, true
    assert true['attitude'] < 5e-4 and true['ang_vel_b'] < 5e-3, true
    assert all(nominal[k] > 100 * true[k] for k in true), (nominal, true)


@pytest.mark.parametrize('name, value', [('mass_scale', 1.0), ('thrust_scale', 1.0),
                                         ('motor_tau_scale', 1.0), ('action_delay_ticks', 0)])
def test_each_parameter_alone_moves_the_prediction(flight, name, value):
    """One parameter back at nominal, the others true: the error grows at least 10x in some
    signal (the log can see it; measured 30-200x)."""
    true, one_off = _rms(TRUE, flight), _rms({**TRUE, name: value}, flight)
    assert max(one_off[k] / true[k] for k in true) > 10.0, (one_off, true)


def test_the_mass_moves_the_vehicle_not_its_rotation(flight):
    """The nominal mass with everything else true: position and velocity off, attitude and
    body rates exactly the true replay's (a mass scale does not enter the rotation)."""
    true, light = _rms(TRUE, flight), _rms({**TRUE, 'mass_scale': 1.0}, flight)
    assert light['pos_w'] > 50 * true['pos_w']
    assert light['attitude'] == pytest.approx(true['attitude'], rel=1e-6)
    assert light['ang_vel_b'] == pytest.approx(true['ang_vel_b'], rel=1e-6)
