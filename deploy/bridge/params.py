"""sim_bridge parameters: the declared defaults per robot and their validation (ROS-free).

QUADROTOR_DEFAULTS / QUADRUPED_DEFAULTS are what the node declares (typed by their default
values); ``validate`` names the first invalid parameter; fault names are checked against the
sensor streams the robot has.
"""

from __future__ import annotations

from sim2real.deploy.bridge.faults import (
    FAULT_NAMES, FaultError, parse_fault_list, parse_schedule)

QUADROTOR_DEFAULTS = {
    'robot': 'quadrotor',
    'urdf_file': 'quadrotor',
    'physics_rate_hz': 500.0,
    'odom_rate_hz': 200.0,
    'imu_rate_hz': 500.0,
    'ground_truth_rate_hz': 100.0,
    'command_interface': 'cmd_vel_legacy',
    'odom_topic': 'odom',
    'imu_topic': 'imu',
    'command_topic': 'cmd_vel_legacy',
    'start_pos_m': [0.0, 0.0, 1.5],
    'hold_until_thrust_fraction': 0.9,
    'command_timeout_s': 0.1,
    'imu_gyro_noise_std_rad_s': 0.0,
    'seed': 0,
    'fault_schedule': '',
    'active_faults': '',
    'fault_drop_probability': 0.3,
    'fault_delay_s': 0.01,
    'fault_delay_jitter_s': 0.005,
    'fault_spike_s': 0.2,
}
DEFAULTS = QUADROTOR_DEFAULTS
_FAULT_DEFAULTS = {k: v for k, v in QUADROTOR_DEFAULTS.items()
                   if k.startswith('fault_') or k in ('active_faults', 'seed')}
QUADRUPED_DEFAULTS = {
    'robot': 'quadruped',
    'urdf_file': 'quadruped',
    'physics_rate_hz': 500.0,
    'joint_states_rate_hz': 500.0,
    'imu_rate_hz': 500.0,
    'ground_truth_rate_hz': 100.0,
    'joint_state_topic': 'joint_states',
    'imu_topic': 'imu',
    'command_topic': 'joint_group_position_controller/commands',
    'kp_command_topic': '',
    'kd_command_topic': '',
    'kp': [20.0] * 12,
    'kd': [0.5] * 12,
    'damping_kd': 1.0,
    'command_timeout_s': 0.1,
    'imu_gyro_noise_std_rad_s': 0.0,
    **_FAULT_DEFAULTS,
}
ROBOT_STREAMS = {'quadrotor': ('imu', 'odom'), 'quadruped': ('joint_states', 'imu')}


def declared_parameters(robot: str = 'quadrotor') -> dict:
    """Names and defaults of every parameter the bridge declares for a robot."""
    return dict(QUADRUPED_DEFAULTS if robot == 'quadruped' else QUADROTOR_DEFAULTS)


def fault_names(robot: str) -> tuple[str, ...]:
    """The fault names a robot's bridge accepts (faults of its own sensor streams)."""
    streams = ROBOT_STREAMS.get(robot, ())
    return tuple(n for n in FAULT_NAMES if not n.startswith(('frozen_', 'nan_'))
                 or n.split('_', 1)[1] in streams)


def parse_robot_faults(robot: str, text: str) -> tuple[str, ...]:
    """parse_fault_list, also rejecting faults of streams this robot does not have."""
    names = parse_fault_list(text)
    foreign = [n for n in names if n not in fault_names(robot)]
    if foreign:
        raise FaultError(f'fault(s) {", ".join(map(repr, foreign))} do not apply to the '
                         f'{robot}; valid: {", ".join(fault_names(robot))}')
    return names


def validate(p: dict) -> None:
    """Raise ValueError naming the first invalid parameter."""
    robot = p['robot']
    streams = ROBOT_STREAMS.get(robot, ())
    if robot == 'quadruped':
        specific = [(k, len(p[k]) == 12 and min(p[k]) >= 0, 'must be 12 values >= 0')
                    for k in ('kp', 'kd')] + [('damping_kd', p['damping_kd'] >= 0, 'must be >= 0')]
    else:
        specific = [
            ('command_interface', p['command_interface'] in ('cmd_vel_legacy', 'rotor_speeds'),
             "must be 'cmd_vel_legacy' or 'rotor_speeds'"),
            ('start_pos_m', len(p['start_pos_m']) == 3, 'must have 3 elements')]
    checks = [
        ('robot', robot in ROBOT_STREAMS, f'must be one of {sorted(ROBOT_STREAMS)}'),
        *specific,
        ('physics_rate_hz', p['physics_rate_hz'] > 0, 'must be > 0'),
        ('command_timeout_s', p['command_timeout_s'] > 0, 'must be > 0'),
        ('fault_drop_probability', 0 <= p['fault_drop_probability'] <= 1, 'must be in [0, 1]'),
        ('fault_delay_s', p['fault_delay_s'] >= 0, 'must be >= 0'),
        ('fault_delay_jitter_s', p['fault_delay_jitter_s'] >= 0, 'must be >= 0'),
        ('fault_spike_s', p['fault_spike_s'] >= 0, 'must be >= 0'),
    ] + [(k, 0 < p[k] <= p['physics_rate_hz'], 'must be in (0, physics_rate_hz]')
         for k in (*(f'{s}_rate_hz' for s in streams), 'ground_truth_rate_hz')]
    for name, ok, why in checks:
        if not ok:
            raise ValueError(f'sim_bridge parameter {name}={p[name]!r}: {why}')
    for name in ('fault_schedule', 'active_faults'):
        try:
            text = p[name] if name == 'active_faults' else ','.join(
                f.name for f in parse_schedule(p[name]))
            parse_robot_faults(robot, text)
        except FaultError as exc:
            raise ValueError(f'sim_bridge parameter {name}: {exc}') from exc
