"""Typed node parameters read from a ROS 2 parameter YAML; unknown keys and wrong types rejected.

The file holds one section per node, ``<node_name>: {ros__parameters: {...}}``. The policy
node's section selects its dataclass by ``robot``: 'quadrotor' -> QuadrotorParams, any other
robot -> JointParams. The 'sim_bridge' section reads into SimBridgeParams.
"""

from __future__ import annotations

import array
import dataclasses
import difflib
import math
import typing
from dataclasses import dataclass, field
from pathlib import Path

import yaml


class ParamError(ValueError):
    """A parameter file is malformed, names an unknown key, or holds a value of the wrong type."""


@dataclass
class QuadrotorParams:
    """Parameters of the quadrotor policy node (config/quadrotor.yaml, section policy_node)."""

    policy_file: str = ''
    """ONNX policy with the contract inside."""
    robot: str = 'quadrotor'
    """Robot profile: 'quadrotor' here."""
    urdf_file: str = 'quadrotor'
    """Name under urdf/ (sim2real.assets.urdf_path) or a path to a .urdf file."""
    rate_hz: float = 100.0
    """Control tick rate [Hz]; must equal the contract's policy_rate_hz."""
    command_interface: str = 'cmd_vel_legacy'
    """'cmd_vel_legacy' (thrust_body_rates policies) or 'rotor_speeds'."""
    odom_topic: str = 'odom'
    """Odometry topic (nav_msgs/Odometry)."""
    imu_topic: str = 'imu'
    """IMU topic (sensor_msgs/Imu)."""
    setpoint_topic: str = 'setpoint'
    """Position setpoint topic (geometry_msgs/PointStamped)."""
    command_topic: str = 'cmd_vel_legacy'
    """Command topic."""
    odom_timeout_s: float = 0.05
    """Odometry older than this on the steady clock latches the fallback [s]."""
    imu_timeout_s: float = 0.05
    """IMU older than this latches the fallback [s]; 0: no IMU stream required."""
    setpoint_timeout_s: float = 0.0
    """Setpoint older than this latches the fallback [s]; 0: no setpoint stream required."""
    hover_target_m: list[float] = field(default_factory=lambda: [0.0, 0.0, 1.5])
    """Position target without a setpoint stream [m; world frame]."""
    soft_start_s: float = 0.2
    """Collective thrust ramps from 0 to the policy's over this time after enable [s]."""
    thrust_min_n: float = 0.0
    """Smallest collective thrust commanded while the motors run [N]."""
    thrust_max_n: float = 0.55
    """Largest collective thrust commanded [N]; at most the contract's max_collective_thrust_n."""
    max_body_rate_rad_s: float = 6.0
    """Clamp on each commanded body rate [rad/s]."""
    max_tilt_rad: float = 1.0
    """Tilt (angle between body z and world z) beyond which the fallback latches [rad]."""
    max_speed_m_s: float = 5.0
    """Odometry speed beyond which the fallback latches (outside the trained domain) and the
    descent stops trusting the velocity reading [m/s]."""
    max_ang_vel_rad_s: float = 20.0
    """Body rate (odometry or gyro, any axis) beyond which the fallback latches [rad/s]."""
    geofence_min_m: list[float] = field(default_factory=lambda: [-2.0, -2.0, -0.1])
    """Lower corner of the allowed box [m; world frame]."""
    geofence_max_m: list[float] = field(default_factory=lambda: [2.0, 2.0, 3.0])
    """Upper corner of the allowed box [m; world frame]."""
    ground_height_m: float = 0.05
    """Below this height the fallback switches the motors off [m]."""
    descend_speed_m_s: float = 0.4
    """Descent speed of the level-and-descend fallback [m/s]."""
    fallback_level_gain: float = 4.0
    """Body rate per unit of horizontal projected gravity in the fallback [rad/s]."""
    fallback_vz_gain: float = 2.0
    """Vertical velocity gain of the fallback [1/s]."""
    fallback_blind_thrust_fraction: float = 0.9
    """Fallback thrust without fresh odometry, as a fraction of hover thrust."""
    fallback_max_descent_s: float = 8.0
    """A blind fallback switches the motors off after this time [s]."""
    diagnostics_period_s: float = 1.0
    """Period of /diagnostics messages [s]."""


@dataclass
class JointParams:
    """Parameters of a joint-robot policy node; per-joint lists follow joint_names."""

    policy_file: str = ''
    """ONNX policy with the contract inside."""
    robot: str = 'joint_robot'
    """Robot profile name (anything but 'quadrotor')."""
    urdf_file: str = ''
    """Name under urdf/ or a path to a .urdf file."""
    rate_hz: float = 50.0
    """Control tick rate [Hz]; must equal the contract's policy_rate_hz."""
    command_interface: str = 'joint_position'
    """'joint_position': position targets with kp and kd per joint."""
    joint_state_topic: str = 'joint_states'
    """Joint state topic (sensor_msgs/JointState)."""
    imu_topic: str = 'imu'
    """Base IMU topic (sensor_msgs/Imu with orientation)."""
    velocity_command_topic: str = 'cmd_vel'
    """Velocity command topic (geometry_msgs/Twist)."""
    command_topic: str = 'joint_commands'
    """Position targets (std_msgs/Float64MultiArray, contract joint order): a ros2_control
    forward position controller's commands topic."""
    kp_command_topic: str = ''
    """Optional per-joint kp topic (Float64MultiArray, contract order) for hardware with a kp
    command interface; '' (default): the hardware keeps its own fixed gains."""
    kd_command_topic: str = ''
    """Optional per-joint kd topic, as kp_command_topic."""
    joint_names: list[str] = field(default_factory=list)
    """Joint names the per-joint lists below refer to (any order; matched by name)."""
    kp: list[float] = field(default_factory=list)
    """Position gains [N m/rad]."""
    kd: list[float] = field(default_factory=list)
    """Velocity gains [N m s/rad]."""
    torque_limit_nm: list[float] = field(default_factory=list)
    """Largest |kp (q* - q) - kd qd| a target may ask for [N m]."""
    pos_min_rad: list[float] = field(default_factory=list)
    """Lower joint position limits for targets [rad]."""
    pos_max_rad: list[float] = field(default_factory=list)
    """Upper joint position limits for targets [rad]."""
    max_rate_rad_s: list[float] = field(default_factory=list)
    """Largest change of a target per second [rad/s]."""
    max_tilt_rad: float = 1.0
    """Base tilt beyond which the fallback latches [rad]."""
    joint_vel_limit_rad_s: float = 20.0
    """|qd| beyond this on any joint latches the fallback [rad/s]."""
    joint_state_timeout_s: float = 0.05
    """Joint states older than this latch the fallback [s]."""
    imu_timeout_s: float = 0.05
    """IMU older than this latches the fallback [s]; 0: no IMU stream required."""
    command_timeout_s: float = 0.0
    """Velocity command older than this latches the fallback [s]; 0: not required."""
    soft_start_s: float = 1.0
    """Length of the soft start after enable [s] (see soft_start_mode)."""
    soft_start_mode: str = 'blend'
    """'blend': targets blend from the measured pose to the policy's; 'stand_up': targets
    move from the measured pose to the default pose with kd stand_up_kd, the policy's output
    is not used (its action history stays zero), then the policy takes over."""
    stand_up_kd: float = 0.0
    """Velocity gain during a 'stand_up' soft start [N m s/rad]; 0: the kd list."""
    velocity_command_limit: list[float] = field(default_factory=lambda: [1.0, 0.5, 1.0])
    """|vx| [m/s], |vy| [m/s], |yaw rate| [rad/s] the velocity command is clipped to."""
    leg_odometry_max_speed_m_s: float = 0.0
    """Leg-odometry base speed (xy, filtered) beyond which the fallback latches [m/s];
    0: no latch (the estimate is still computed when the contract names the feet)."""
    fallback: str = 'damping'
    """'damping' (kp 0, kd damping_kd, target = measured q) or 'hold' (hold q at the latch)."""
    damping_kd: float = 1.0
    """Velocity gain of the damping fallback [N m s/rad]."""
    diagnostics_period_s: float = 1.0
    """Period of /diagnostics messages [s]."""


@dataclass
class SimBridgeParams:
    """Parameters of the HIL sim bridge node (section sim_bridge)."""

    robot: str = 'quadrotor'
    """Robot profile."""
    urdf_file: str = 'quadrotor'
    """Name under urdf/ or a path."""
    physics_rate_hz: float = 500.0
    """Physics rate [Hz]."""
    odom_rate_hz: float = 200.0
    """Odometry publish rate [Hz]."""
    imu_rate_hz: float = 500.0
    """IMU publish rate [Hz]."""
    command_interface: str = 'cmd_vel_legacy'
    """'cmd_vel_legacy' or 'rotor_speeds'."""
    odom_topic: str = 'odom'
    """Odometry topic."""
    imu_topic: str = 'imu'
    """IMU topic."""
    command_topic: str = 'cmd_vel_legacy'
    """Command topic."""
    start_pos_m: list[float] = field(default_factory=lambda: [0.0, 0.0, 1.5])
    """Start (and reset) position [m; world frame]."""
    hold_until_thrust_fraction: float = 0.9
    """Hand launch: held still until thrust >= this fraction of hover thrust."""
    command_timeout_s: float = 0.1
    """Firmware-style watchdog on incoming commands [s]."""
    imu_gyro_noise_std_rad_s: float = 0.0
    """Gyro noise standard deviation [rad/s]."""
    seed: int = 0
    """Seed of the noise and fault generators."""
    fault_schedule: str = ''
    """'name@start_s+duration_s;...' from start/reset."""
    active_faults: str = ''
    """Comma list of faults active now (settable at run time)."""
    fault_drop_probability: float = 0.3
    """Probability of dropping each sensor message under 'drop'."""
    fault_delay_s: float = 0.01
    """Fixed part of the 'delay' fault [s]."""
    fault_delay_jitter_s: float = 0.005
    """Uniform jitter added to the 'delay' fault [s]."""
    fault_spike_s: float = 0.2
    """Hold time of the 'latency_spike' fault [s]."""


_VECTOR3 = {'hover_target_m', 'geofence_min_m', 'geofence_max_m', 'start_pos_m',
            'velocity_command_limit'}


def params_class(node_name: str, robot: str) -> type:
    """The dataclass of a node's section: bridge, quadrotor or joint-robot policy node."""
    if node_name == 'sim_bridge':
        return SimBridgeParams
    return QuadrotorParams if robot == 'quadrotor' else JointParams


def parameter_defaults(robot: str = 'quadrotor', node_name: str = 'policy_node') -> dict:
    """Every parameter name of a node's section with its default (lists copied)."""
    return dataclasses.asdict(params_class(node_name, robot)(robot=robot))


def load_params(path: str | Path, node_name: str = 'policy_node',
                overrides: dict | None = None):
    """Typed params of node_name's section of a ROS 2 parameter file, overrides applied last."""
    try:
        raw = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ParamError(f'{path}: cannot read parameter file: {exc}') from exc
    section = (raw or {}).get(node_name)
    if not isinstance(section, dict) or not isinstance(section.get('ros__parameters'), dict):
        raise ParamError(f'{path}: no "{node_name}: ros__parameters:" section')
    values = dict(section['ros__parameters'])
    values.update(overrides or {})
    return params_from_dict(values, node_name)


def params_from_dict(values: dict, node_name: str = 'policy_node'):
    """Typed params from a flat dict; names the unknown or mistyped key."""
    robot = values.get('robot', 'quadrotor')
    cls = params_class(node_name, robot)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    hints = typing.get_type_hints(cls)
    for key, value in values.items():
        if key not in fields:
            raise unknown_parameter(node_name, key, fields)
        values[key] = _coerce(key, value, hints[key])
    return cls(**values)


def unknown_parameter(node_name: str, key: str, valid) -> ParamError:
    """The error for an unknown parameter name, suggesting the closest valid one."""
    close = difflib.get_close_matches(key, list(valid), n=1)
    hint = f'; did you mean "{close[0]}"?' if close else ''
    return ParamError(f'{node_name}: unknown parameter "{key}"{hint}')


def _coerce(key: str, value, hint):
    """value checked against the annotation hint (int accepted for float); names key."""
    def bad(expected: str):
        return ParamError(f'parameter "{key}" must be {expected}, got {value!r}')
    if hint is str:
        if not isinstance(value, str):
            raise bad('a string')
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad('an integer')
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad('a number')
        if not math.isfinite(value):
            raise bad('finite')
        return float(value)
    item = typing.get_args(hint)[0]
    if not isinstance(value, (list, tuple, array.array)):  # rclpy gives array.array('d')
        raise bad('a list')
    out = [_coerce(f'{key}[{i}]', v, item) for i, v in enumerate(value)]
    if key in _VECTOR3 and len(out) != 3:
        raise bad('a list of 3 numbers')
    return out
