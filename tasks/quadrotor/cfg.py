"""Quadrotor task configurations: hover (with recovery) and trajectory tracking.

Rates: physics and the simulated onboard rate controller at 200 Hz, policy at 100 Hz. The
Crazyflie firmware runs its rate loop at 500 Hz; with motor time constants of 60-150 ms the
200 Hz simulation of that loop is a small approximation that cuts the physics cost 2.5x.
"""

from __future__ import annotations

import math

from sim2real.mdp import episode_terms, events as common_events
from sim2real.mdp.cfg import (
    EnvCfg, EventTermCfg, ObsGroupCfg, ObsTermCfg, RandomParamCfg, RewardTermCfg, TermClassCfg,
    TerminationTermCfg)
from sim2real.tasks.quadrotor import actions, commands, events, mdp
from sim2real.tasks.quadrotor.metrics import PositionMetrics
from sim2real.tasks.quadrotor.scene import QuadrotorScene

ACTIONS = {
    'thrust_body_rates': actions.ThrustBodyRatesAction,
    'rotor_speeds': actions.RotorSpeedsAction,
}


DELAY_NOTE = """Delays, measured through `sim2real hil` (`observation_age_p99_ms`, the age of
the oldest sensor sample a tick uses; four flights on a 2-core machine): 2-12 ms in nominal
flight, 19-22 ms under the `delay` fault (10-15 ms added), plus under 2 ms until the
bridge's 500 Hz loop applies a command. Action and observation delay add up to one loop delay (the
policy sees its own last outputs either way), so one parameter spans it: 0-2 ticks (0-20
ms) of action delay. On top, a tick's observation is one tick older with probability 0.3
(a message late by part of a period) and per-env dropout probabilities up to 0.3 repeat
the last observation (the `drop` fault's rate: the runtime then holds the last sample).
3 ticks (30 ms, a radio link) lie 1.25x past the range, judged at success >= 0.8."""
DELAY_SOURCE = ('sensor age through sim2real hil: 2-12 ms p99, 19-22 ms under its delay '
                'fault (tasks/quadrotor/cfg.py DELAY_NOTE)')


def randomization_box() -> dict[str, RandomParamCfg]:
    """The quadrotor's randomization box: scalar draws per episode, nominal values cited."""
    urdf = 'urdf/quadrotor.urdf (urdf/README.md)'
    return {
        'mass_scale': RandomParamCfg('events.mass.value_range', 1.0, 'x URDF mass', source=urdf),
        'inertia_scale': RandomParamCfg('events.inertia.value_range', 1.0,
                                        'x URDF inertia', source=urdf),
        'thrust_scale': RandomParamCfg('events.rotors.thrust_scale', 1.0, 'x URDF kf',
                                       source=f'{urdf}; battery voltage and propeller wear'),
        'motor_tau_scale': RandomParamCfg(
            'events.rotors.time_constant_scale', 1.0, 'x URDF motor time constant (0.1 s)',
            source=f'{urdf}: 0.06-0.14 s holds the identified 0.069 / 0.114 s; the quoted '
            '0.05 and 0.15 s lie 1.25x past its edges'),
        'action_delay_ticks': RandomParamCfg('action.delay_ticks', 0.0, 'ticks (10 ms)',
                                             integer=True, source=DELAY_SOURCE),
        'observation_dropout': RandomParamCfg('observations.policy.dropout_prob', 0.0,
                                              'probability per tick',
                                              source='the HIL drop fault: 30 % of messages'),
    }


def _policy_terms(noise: bool, track: bool) -> dict[str, ObsTermCfg]:
    """Policy observations in contract order; noise std in scaled units.

    Body rates over the last 4 ticks and velocity over the last 3, beside the last 4
    outputs: how the vehicle answered its recent commands tells a slow motor, a late link
    or a weak battery apart. Measured (hover seed 0, 600 iterations, 32 episodes per
    point): with them 41 of 64 box corners at success >= 0.85 and 3 ticks of delay 0.53,
    without 45 and 0.31; with edge-biased training as well (cfg's train defaults) 48 and
    0.97 against 36 and 0.42 for neither.
    """
    def n(std):
        return std if noise else 0.0
    out = {
        'position_error_w': ObsTermCfg(mdp.position_error_w, clip=2.0, noise_std=n(0.01)),
        'rotation_matrix': ObsTermCfg(mdp.rotation_matrix, noise_std=n(0.01)),
        'lin_vel_b': ObsTermCfg(mdp.lin_vel_b, scale=0.5, clip=5.0, noise_std=n(0.01),
                                history_length=3),
        'ang_vel_b': ObsTermCfg(mdp.ang_vel_b, scale=0.25, clip=10.0, noise_std=n(0.02),
                                history_length=4),
        # computed by the runtime at the tick, never late: no observation delay or dropout
        'action_history': ObsTermCfg(mdp.action_history, delayed=False),
    }
    if track:
        out['reference_velocity_w'] = ObsTermCfg(mdp.reference_velocity_w, scale=0.5)
    return out


def quadrotor_hover_cfg(action: str = 'thrust_body_rates', play: bool = False) -> EnvCfg:
    """Reach and hold a random target from random states, tilts up to 90 deg and spin.

    Success: no crash, and within 0.1 m of the target for the whole last 2 s of a 7 s episode.
    """
    critic = dict(_policy_terms(noise=False, track=False))
    critic['physical_params'] = ObsTermCfg(mdp.physical_params)
    cfg = EnvCfg(
        task='quadrotor-hover',
        robot='quadrotor',
        scene=TermClassCfg(QuadrotorScene, {'urdf': 'quadrotor'}),
        # 0-2 ticks (0-20 ms) of action delay, the last 4 outputs observed (DELAY_NOTE)
        action=TermClassCfg(ACTIONS[action], {'delay_ticks': (0, 2), 'history_ticks': 4}),
        # targets 2.5-3.5 m up, starts >= 2.5 m: room below for righting from a 90 deg tilt
        # and braking the fall at the box's heavy, weak, slow corner (thrust-to-weight 1.59,
        # 0.14 s motors, 20 ms delay), about 3 m. With the former 1.5-2.5 m targets and
        # 1.5 m floor the shipped policy crashed there in 19-22 % of episodes (64 per point,
        # corners 62 of 64); with 1 m more room the same policy passes all 64 (worst 0.89),
        # and capping the starts' tilt at 60 deg instead did too; a wider too_far limit
        # alone changed nothing.
        # Trained with this room (seed 0, 600 iterations) the heavy corners fall to 0.70 and
        # 0.52: the shipped policy was trained with the 1.5 m floor (policies/quadrotor_hover.md)
        commands={'target': TermClassCfg(commands.HoverTarget, {
            'pos_range_w': ((-1.0, -1.0, 2.5), (1.0, 1.0, 3.5))})},
        observations={
            'policy': ObsGroupCfg(_policy_terms(noise=True, track=False), jitter_prob=0.3,
                                  dropout_prob=(0.0, 0.3)),
            'critic': ObsGroupCfg(critic, add_noise=False),
        },
        rewards={
            # positive while flying near the target, so staying airborne always pays
            'alive': RewardTermCfg(mdp.alive, weight=1.0),
            'position': RewardTermCfg(mdp.position_error_l2, weight=-0.3),
            'position_coarse': RewardTermCfg(mdp.track_position_exp, weight=2.0,
                                             params={'std_m': 0.5}),
            'position_fine': RewardTermCfg(mdp.track_position_exp, weight=2.0,
                                           params={'std_m': 0.1}),
            'velocity': RewardTermCfg(mdp.velocity_error_l2sq, weight=-0.05),
            # sinking faster than 1 m/s: a vehicle of the box's heavy, weak, slow corner
            # cannot brake from it in the room it has (crash rate there 0.43 -> 0.31 at 2
            # ticks of delay, seed 0)
            'descent': RewardTermCfg(mdp.descent_speed_excess_sq, weight=-1.0,
                                     params={'max_m_s': 1.0}),
            'tilt': RewardTermCfg(mdp.tilt, weight=-0.2),
            'ang_vel': RewardTermCfg(mdp.ang_vel_l2sq, weight=-0.01),
            # -0.15, not -0.05: at the heavy, weak, slow corners (thrust-to-weight 1.6, 0.14 s
            # motors, 20 ms delay) bang-bang rate commands turned into a 0.4 s attitude limit
            # cycle that sank the vehicle; smoother outputs took them from 61 to 62 of 64
            # corners and their worst from 0.63 to 0.78 (hover seed 0, 600 iterations, 64
            # episodes per point; -0.15 with an ang_vel weight of -0.05 as well: 57)
            'action_rate': RewardTermCfg(mdp.action_rate_l2sq, weight=-0.15),
            'crash': RewardTermCfg(episode_terms.is_terminated, weight=-100.0),
        },
        terminations={
            'time_out': TerminationTermCfg(mdp.time_out, time_out=True),
            'crash': TerminationTermCfg(mdp.ground_contact, {'min_height_m': 0.03}),
            'too_far': TerminationTermCfg(mdp.too_far, {'max_distance_m': 3.0}),
        },
        events={
            # mass ~ U(0.8, 1.2) x nominal; inertia ~ U(0.8, 1.2) x nominal per axis
            'mass': EventTermCfg(common_events.randomize_body_field, 'reset', {
                'field': 'body_mass', 'body': 1, 'value_range': (0.8, 1.2)}),
            'inertia': EventTermCfg(common_events.randomize_body_field, 'reset', {
                'field': 'body_inertia', 'body': 1, 'value_range': (0.8, 1.2),
                'per_axis': True}),
            # thrust coefficient ~ U(0.85, 1.15), per-rotor mismatch ~ U(0.95, 1.05),
            # motor time constant ~ U(0.6, 1.4) x 0.1 s: 0.06-0.14 s (urdf/README.md)
            'rotors': EventTermCfg(events.randomize_rotors, 'reset', {
                'thrust_scale': (0.85, 1.15), 'rotor_mismatch': (0.95, 1.05),
                'time_constant_scale': (0.6, 1.4)}),
            # start up to 1 m from the target and >= 2.5 m up, tilt ~ U(0, 90 deg) about a
            # random horizontal axis, body rates ~ U(-4, 4) rad/s, velocity ~ U(-0.5, 0.5) m/s
            'start': EventTermCfg(events.reset_around_target, 'reset', {
                'offset_m': 1.0, 'min_height_m': 2.5, 'max_tilt_rad': math.pi / 2,
                'lin_vel_m_s': 0.5, 'ang_vel_rad_s': 4.0}),
            # wind-like force up to 4 % of the nominal weight, redrawn every 1-3 s
            'disturbance': EventTermCfg(events.external_force, 'interval',
                                        {'max_force_n': 0.01}, interval_s=(1.0, 3.0)),
        },
        metrics=TermClassCfg(PositionMetrics, {
            'window_s': 2.0, 'tolerance_m': 0.1, 'statistic': 'max'}),
        randomization=randomization_box(),
        physics_dt_s=0.005,
        decimation=2,
        episode_length_s=7.0,
    )
    if play:
        cfg.events.pop('disturbance')
        cfg.observations['policy'].add_noise = False
    return cfg


def quadrotor_track_cfg(action: str = 'thrust_body_rates', play: bool = False) -> EnvCfg:
    """Follow random smooth reference trajectories (sums of sinusoids, <= 0.3 Hz).

    Success: no crash, and a MEAN position error <= 0.15 m over the last 3 s of 8 s.
    """
    cfg = quadrotor_hover_cfg(action, play)
    cfg.task = 'quadrotor-track'
    cfg.commands['target'] = TermClassCfg(commands.SmoothTrajectory)
    cfg.observations['policy'].terms = _policy_terms(noise=not play, track=True)
    critic = dict(_policy_terms(noise=False, track=True))
    critic['physical_params'] = ObsTermCfg(mdp.physical_params)
    cfg.observations['critic'].terms = critic
    # gentle starts near the reference (centres 1.2-1.8 m up), at least 1.5 m up
    cfg.events['start'].params.update(offset_m=0.3, min_height_m=1.5, max_tilt_rad=0.5,
                                      ang_vel_rad_s=1.0)
    cfg.metrics = TermClassCfg(PositionMetrics, {
        'window_s': 3.0, 'tolerance_m': 0.15, 'statistic': 'mean'})
    cfg.episode_length_s = 8.0
    return cfg
