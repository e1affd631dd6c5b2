"""The quadrotor's simulated twin for the HIL bridge: its parameters, streams and checks."""

from sim2real.assets import urdf_path
from sim2real.deploy.robots.quadrotor.cmd_vel_legacy import THRUST_MAPS
from sim2real.deploy.bridge.params import RobotBridge
from sim2real.deploy.robots.quadrotor.variant import knobs
from sim2real.deploy.robots.quadrotor.bridge_sim import QuadrotorSim
from sim2real.deploy.robots.quadrotor.faults import quadrotor_faults

DEFAULTS = {
    'robot': 'quadrotor',
    'urdf_file': 'quadrotor',
    'odom_rate_hz': 200.0,
    'imu_rate_hz': 500.0,
    'command_interface': 'cmd_vel_legacy',
    'odom_topic': 'odom',
    'imu_topic': 'imu',
    'command_topic': 'cmd_vel_legacy',
    'start_pos_m': [0.0, 0.0, 1.5],
    'start_yaw_rad': 0.0,
    'hold_until_thrust_fraction': 0.9,
    'legacy_thrust_map': 'battery_compensated',
    'odom_twist_frame': 'body',
    'odom_angular_velocity': True,
}
"""The quadrotor bridge's own parameters (the spec's sim_bridge section)."""


def checks(p: dict) -> list:
    """The command interface and the start position."""
    return [
        ('command_interface', p['command_interface'] in ('cmd_vel_legacy', 'rotor_speeds'),
         "must be 'cmd_vel_legacy' or 'rotor_speeds'"),
        ('start_pos_m', len(p['start_pos_m']) == 3, 'must have 3 elements'),
        ('legacy_thrust_map', p['legacy_thrust_map'] in THRUST_MAPS,
         f'must be one of {sorted(THRUST_MAPS)}'),
        ('odom_twist_frame', p['odom_twist_frame'] in ('body', 'world'),
         "must be 'body' or 'world'")]


def make_sim(p: dict) -> QuadrotorSim:
    """The vehicle held at start_pos_m until the thrust lifts it."""
    return QuadrotorSim(
        urdf_path(p['urdf_file']), p['physics_rate_hz'], p['start_pos_m'],
        p['hold_until_thrust_fraction'], p['command_timeout_s'],
        p['imu_gyro_noise_std_rad_s'], p['seed'], start_yaw_rad=p['start_yaw_rad'])


BRIDGE = RobotBridge(defaults=DEFAULTS, streams=('imu', 'odom'), checks=checks,
                     make_sim=make_sim, faults=quadrotor_faults, variant=knobs)
