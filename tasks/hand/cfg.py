"""hand-rotate: rotate the cube about the palm normal, proprioception only (HORA, LEAP).

Sources (hand.md): [HORA] Qi et al. 2022 and its code; [LEAP] LEAP_Hand_Sim (the HORA port)
and LEAP Hand Isaac Lab; [PG] MuJoCo Playground's LEAP tasks; [DX] DeXtreme.
"""

from __future__ import annotations

from sim2real.mdp import episode_terms
from sim2real.mdp.cfg import (
    EnvCfg, EventTermCfg, ObsGroupCfg, ObsTermCfg, RandomParamCfg, RewardTermCfg, TermClassCfg,
    TerminationTermCfg)
from sim2real.mdp.events import (
    randomize_encoder_bias, randomize_joint_sensor_age, randomize_pd_gains)
from sim2real.mdp.joint_actions import (
    JointPositionDeltaAction, JointPositionRateCappedAction, JointPositionTargetAction)
from sim2real.tasks.hand import events, mdp
from sim2real.tasks.hand.metrics import RotationMetrics
from sim2real.tasks.hand.scene import HandScene

KP_NM_PER_RAD, KD_NM_S_PER_RAD = 3.0, 0.1
"""[LEAP], [HORA]: Kp 3 N m/rad, Kd 0.1 N m s/rad."""
DELTA_RAD = 1.0 / 24.0
"""Target change per control step at |a| = 1 [rad]: [HORA], [LEAP] (0.83 rad/s at 20 Hz)."""
OFFSET_RAD = 0.6
"""Target offset from the grasp pose at |a| = 1 of the absolute interface [rad]: [PG] RotateZ."""
TARGET_MAX_RATE_RAD_S = 8.48
"""The rate-capped absolute interface's targets move at most this fast: the XC330-M288-T's
no-load speed (81 rpm, the URDF's joint velocity limit; urdf/README.md), so a target never
leads by more than the servo travels in a tick; config/hand.yaml's slew cap is the same."""
MAX_ROTATION_RAD_S = 1.0
"""Clip of the rewarded rotation rate: a 0.8 rad/s target needs 0.8-1.0 (hand.md 4.1)."""
DROP_DISTANCE_M = 0.07
"""The cube is dropped 7 cm from its rest position ([LEAP] Isaac Lab's fall distance)."""
FINGERTIP_GUARD = {'min_distance_m': 0.025, 'workspace_min_m': (-0.12, -0.15, 0.2),
                   'workspace_max_m': (0.22, 0.15, 0.42)}
"""The deploy's fingertip guard (config/hand.yaml): pad centres 2.5 cm apart (3 mm between
the 11 mm pads) and a box in the mount frame. Training ends an episode where it would trip:
on the hand it latches the hold fallback, and self-collisions draw the most current
(hand.md, LEAP_Hand_API issue 7)."""
HISTORY_TICKS = 3
"""Ticks of joint positions and targets the policy sees ([HORA], [LEAP]: 3)."""
SENSOR_AGE_SUBSTEPS = (0, 5)
"""Age of the joint readings at a tick: 0-25 ms at 200 Hz physics (see _events) [steps]."""
ACTION_LAG_SUBSTEPS = (0, 4)
"""Targets reach the servos 0-20 ms after the tick (the policy's inference, the middleware,
the bus write of 16 servos), on top of the 0-1 tick action delay [physics steps]."""
PUSH_INTERVAL_S = 0.05
"""The cube pushes' event period: every control step, as HORA draws them [s]."""


def _policy_terms() -> dict[str, ObsTermCfg]:
    """3 ticks x (16 joint positions + 16 previous targets), both in [-1, 1]: 96 inputs."""
    return {
        # joint reading noise: 0.02 rad [HORA] on a range of about 2.5 rad is ~0.016 in the
        # [-1, 1] scale
        'joint_pos_unit': ObsTermCfg(mdp.joint_pos_unit, noise_std=0.016,
                                     history_length=HISTORY_TICKS),
        'joint_target_unit': ObsTermCfg(mdp.joint_target_unit, delayed=False,
                                        history_length=HISTORY_TICKS),
    }


def _critic_terms() -> dict[str, ObsTermCfg]:
    """The policy's inputs now, plus what the hand cannot sense: joint velocities, the cube's
    pose and motion relative to the palm (the HORA privileged fields, [PG]'s critic)."""
    return {
        'joint_pos_unit': ObsTermCfg(mdp.joint_pos_unit),
        'joint_target_unit': ObsTermCfg(mdp.joint_target_unit),
        'joint_vel': ObsTermCfg(mdp.joint_vel, scale=0.2),
        'cube_pos': ObsTermCfg(mdp.cube_pos_rel, scale=10.0),
        'cube_quat': ObsTermCfg(mdp.cube_quat),
        'cube_lin_vel': ObsTermCfg(mdp.cube_lin_vel, scale=2.0),
        'cube_ang_vel': ObsTermCfg(mdp.cube_ang_vel, scale=0.2),
        'cube_rotation_rate': ObsTermCfg(mdp.cube_rotation_rate),
    }


def _rewards() -> dict[str, RewardTermCfg]:
    """[LEAP]'s weights (hand.md 1a) with the rotation rate clipped at 1 rad/s."""
    return {
        # weight 1: the episode's sum of this term is the radians rotated ([PG] RotateZ)
        'rotation': RewardTermCfg(mdp.rotation_rate_clipped, 1.0,
                                  {'max_rad_s': MAX_ROTATION_RAD_S}),
        'cube_lin_vel': RewardTermCfg(mdp.cube_lin_vel_l1, -0.3),
        'pose': RewardTermCfg(mdp.pose_deviation_l2, -0.1),
        'torques': RewardTermCfg(mdp.joint_torques_l2, -0.1),
        'work': RewardTermCfg(mdp.work_l2, -1.0),
        # a drop or a fingertip guard trip costs 200 x 0.05 s = 10 ([LEAP]: -10 x fallen)
        'drop': RewardTermCfg(episode_terms.is_terminated, -200.0),
    }


def _events() -> dict[str, EventTermCfg]:
    """The randomization suite, with its sources (hand.md 4.1's start ranges)."""
    return {
        # edge x 0.95-1.1: 6.65-7.7 cm, holding [PG]'s 7 cm and [LEAP]'s 7.5 cm cubes ([DX]
        # x 0.95-1.05, LEAP_Hand_Sim x 0.9-1.1); mass x 0.8-1.2 ([PG]'s intent)
        'cube': EventTermCfg(events.randomize_cube, 'reset', {
            'size_scale_range': (0.95, 1.1), 'mass_scale_range': (0.8, 1.2)}),
        'cube_com': EventTermCfg(events.randomize_cube_com, 'reset',
                                 {'offset_m': 0.005}),            # [PG] +-5 mm
        'cube_friction': EventTermCfg(events.randomize_cube_friction, 'reset',
                                      {'friction_range': (0.3, 1.5)}),   # [LEAP] Isaac Lab
        'fingertip_friction': EventTermCfg(events.randomize_fingertip_friction, 'reset',
                                           {'friction_range': (0.5, 1.0)}),   # [PG]
        'pd_gains': EventTermCfg(randomize_pd_gains, 'reset', {
            'kp_scale': (0.8, 1.2), 'kd_scale': (0.8, 1.2)}),   # [PG]
        'joint_dynamics': EventTermCfg(events.randomize_joint_dynamics, 'reset', {
            'frictionloss_scale': (0.5, 2.0), 'armature_scale': (1.0, 1.05)}),   # [PG]
        'link_masses': EventTermCfg(events.randomize_link_masses, 'reset',
                                    {'scale_range': (0.9, 1.1)}),   # [PG]
        # 0.22-0.29 N m: Playground's 0.2196 N m up to the URDF's 550 mA value
        'torque_limit': EventTermCfg(events.randomize_torque_limit, 'reset',
                                     {'strength_range': (0.75, 1.0)}),
        'encoder_bias': EventTermCfg(randomize_encoder_bias, 'reset',
                                     {'bias_rad': 0.03}),   # [LEAP] Isaac Lab robot_bias
        # the joint readings a tick sees are 0-25 ms old, on top of the 0-1 tick observation
        # delay: the servo bus delivers each reading 5-11 ms after it sampled it (a combined
        # read of 16 servos, under 90 Hz, LEAP_Hand_API) and the node takes the newest of a
        # ~100 Hz stream. A policy trained on whole ticks only turned the cube at 7.3 rad per
        # 10 s with its readings one tick old and at 1.6 with them half a tick old
        'joint_sensor_age': EventTermCfg(randomize_joint_sensor_age, 'reset',
                                         {'age_substeps': SENSOR_AGE_SUBSTEPS}),
        'reset_grasp': EventTermCfg(events.reset_grasp, 'reset', {
            'joint_noise_rad': 0.05, 'cube_offset_m': 0.005, 'cube_yaw_rad': 0.2}),
        # [HORA]'s object forces (p 0.25 per step, decay 0.9 per 0.08 s) at 1 N/kg, not its
        # 2: HORA's hand grips the object from above, here the cube rests on the open palm on
        # friction alone. With the hand still, 2 N/kg pushed 31 % of the cubes off the palm
        # in 5 s, 1 N/kg 3 %, 0.5 N/kg none (64 envs, zero actions)
        'push_cube': EventTermCfg(events.push_cube, 'interval', {
            'force_per_kg_n': 1.0, 'prob': 0.25, 'decay_per_s': 0.9 ** (1 / 0.08),
            'interval_s': PUSH_INTERVAL_S}, interval_s=(PUSH_INTERVAL_S, PUSH_INTERVAL_S)),
    }


def randomization_box() -> dict[str, RandomParamCfg]:
    """The hand's randomization box: scalar draws per env, nominal values cited."""
    urdf = 'urdf/hand.urdf (urdf/README.md)'
    return {
        'cube_mass': RandomParamCfg('events.cube.mass_scale_range', 1.0, 'x 0.108 kg',
                                    source=urdf),
        'cube_size': RandomParamCfg('events.cube.size_scale_range', 1.0, 'x 7 cm edge',
                                    source=urdf),
        'cube_friction': RandomParamCfg('events.cube_friction.friction_range', 0.3,
                                        'sliding friction', source=urdf),
        'fingertip_friction': RandomParamCfg('events.fingertip_friction.friction_range', 0.7,
                                             'sliding friction', source=urdf),
        'torque_limit': RandomParamCfg('events.torque_limit.strength_range', 1.0,
                                       'x 0.29 N m', source=urdf),
        'action_delay_ticks': RandomParamCfg('action.delay_ticks', 0.0, 'ticks (50 ms)',
                                             integer=True, source='[LEAP] Isaac Lab 0-3 '
                                             'ticks at 30 Hz; [DX] up to 1.5 ticks'),
        'observation_delay_ticks': RandomParamCfg('observations.policy.delay_ticks', 0.0,
                                                  'ticks (50 ms)', integer=True,
                                                  source='[DX]: observation delay'),
        # nominal 0 for both: the tick boundary, as for the whole-tick delays
        'action_lag_substeps': RandomParamCfg('action.lag_substeps', 0.0, 'physics steps (5 ms)',
                                              integer=True, source='inference, middleware '
                                              'and a bus write of 16 servos after the tick'),
        'joint_sensor_age_substeps': RandomParamCfg(
            'events.joint_sensor_age.age_substeps', 0.0, 'physics steps (5 ms)', integer=True,
            source='readings 5-11 ms late (LEAP_Hand_API read cycle) + up to 10 ms between '
            'readings'),
    }


def hand_rotate_cfg(play: bool = False, action: str | None = None) -> EnvCfg:
    """Rotate the cube about the palm normal (counter-clockwise seen from above) with the
    delta-on-target integrator (action None or its kind), [PG]'s absolute targets
    (joint_position_offset) or those moving at most at the servo's speed
    (joint_position_rate_capped)."""
    kinds = (JointPositionDeltaAction.kind, JointPositionTargetAction.kind,
             JointPositionRateCappedAction.kind)
    if action not in (None,) + kinds:
        raise ValueError(f'the hand tasks take the action interfaces {kinds}; got "{action}"')
    absolute = {'scale': OFFSET_RAD, 'clip': 1.0, 'delay_ticks': (0, 1), 'noise_std': 0.1,
                'lag_substeps': ACTION_LAG_SUBSTEPS}
    if action == JointPositionTargetAction.kind:
        # [PG] LeapCubeRotateZAxis: q* = q_home + 0.6 a, clipped to the joint ranges
        term = TermClassCfg(JointPositionTargetAction, absolute)
    elif action == JointPositionRateCappedAction.kind:
        # the same, each target moving at most at the servo's speed (the node's slew cap)
        term = TermClassCfg(JointPositionRateCappedAction,
                            {**absolute, 'max_rate_rad_s': TARGET_MAX_RATE_RAD_S})
    else:
        # q* = clip(q*_prev + a / 24, joint ranges)
        term = TermClassCfg(JointPositionDeltaAction, {
            'scale': DELTA_RAD, 'clip': 1.0, 'delay_ticks': (0, 1), 'noise_std': 0.1,
            'lag_substeps': ACTION_LAG_SUBSTEPS})
    cfg = EnvCfg(
        task='hand-rotate',
        robot='hand',
        # grasp_pose_rad: joint name -> rad over the URDF's <default_pose> (reset pose, pose
        # penalty reference, contract default pose)
        scene=TermClassCfg(HandScene, {'urdf': 'hand', 'kp_nm_per_rad': KP_NM_PER_RAD,
                                       'kd_nm_s_per_rad': KD_NM_S_PER_RAD,
                                       'grasp_pose_rad': {}}),
        # targets 0-1 tick (0-50 ms) late at the motors; actuation noise 0.1 on the outputs
        # ([LEAP] Isaac Lab: 0.1-0.2)
        action=term,
        observations={
            'policy': ObsGroupCfg(_policy_terms(), delay_ticks=(0, 1)),
            'critic': ObsGroupCfg(_critic_terms(), add_noise=False),
        },
        rewards=_rewards(),
        terminations={
            'time_out': TerminationTermCfg(mdp.time_out, time_out=True),
            'cube_dropped': TerminationTermCfg(mdp.cube_dropped,
                                               {'max_distance_m': DROP_DISTANCE_M}),
            'fingertip_guard': TerminationTermCfg(mdp.fingertip_guard, dict(FINGERTIP_GUARD)),
        },
        events=_events(),
        metrics=TermClassCfg(RotationMetrics, {'min_rotation_rad_per_10s': 4.0}),
        randomization=randomization_box(),
        # 200 Hz physics, 20 Hz control [PG, HORA: 20 Hz]; 5 ms, not Playground's 10 ms: see
        # urdf/README.md "Simulation step" (bench/raw_hand.py)
        physics_dt_s=0.005,
        decimation=10,
        episode_length_s=20.0,   # [HORA], [LEAP]
    )
    if play:
        cfg.events.pop('push_cube')
        cfg.observations['policy'].add_noise = False
        cfg.action.params['noise_std'] = 0.0
    return cfg
