"""Typed node parameters read from a ROS 2 parameter YAML; unknown keys and wrong types rejected.

The file holds one section per node, ``<node_name>: {ros__parameters: {...}}``. The policy
node's section selects its dataclass by ``robot`` (required), from the robot registry
(`sim2real.deploy.robots`: each robot's runtime entry names its params class). A list field
with ``metadata={'length': n}`` must hold n values. (The bridge's section is checked by
`sim2real.deploy.bridge.params`.)
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
class LoopParams:
    """The control loop thread's scheduling (every robot's node has it)."""

    loop_priority: int = 50
    """SCHED_FIFO priority of the control loop's thread, 1-99 (as ros2_control's node sets
    its update thread's; where refused, the node warns and runs as launched); 0: leave the
    thread as launched."""
    timing_file: str = ''
    """At shutdown, write the last ticks' timing (each period, how late the loop thread woke,
    how long each tick ran [s]) to this .npz file, to check the computer's real-time
    behaviour tick by tick; '': none."""


@dataclass
class RecordParams(LoopParams):
    """The flight recorder's and the training-band monitor's parameters, and the loop's
    (every robot's node has them)."""

    record: bool = True
    """Log what the node received and decided to MCAP (sim2real.deploy.record); false: no
    log."""
    record_dir: str = ''
    """Folder of the logs; '': $ROS_HOME/sim2real/flights ($ROS_HOME defaults to ~/.ros)."""
    record_max_file_mb: float = 512.0
    """A log file past this size is finished and the next one started [MiB]."""
    ood_window_s: float = 1.0
    """Window of the share of ticks each observation term spent outside its training band
    (diagnostics ood_share.TERM) [s]."""
    ood_warn_share: float = 0.05
    """A share above this makes the diagnostics a warning naming the term (never a latch)."""


@dataclass
class JointParams(RecordParams):
    """Parameters of the generic joint chain's policy node; per-joint lists follow
    joint_names. A robot's params inherit these and its parts' (`parts.py`)."""

    policy_file: str = ''
    """ONNX policy with the contract inside."""
    robot: str = ''
    """Registered robot name (`sim2real.deploy.robots`)."""
    urdf_file: str = ''
    """Name under urdf/ or a path to a .urdf file."""
    rate_hz: float = 50.0
    """Control tick rate [Hz]; must equal the contract's policy_rate_hz."""
    command_interface: str = 'joint_position'
    """'joint_position': position targets with kp and kd per joint."""
    joint_state_topic: str = 'joint_states'
    """Joint state topic (sensor_msgs/JointState)."""
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
    """Largest |kp (q* - q) - kd qd| a target may ask for [N m] (see torque_limit_by)."""
    torque_limit_by: str = 'node'
    """Who holds the PD torque within torque_limit_nm. 'node': every target is clamped to
    the torque-feasible interval of the last measured state, at the control rate. 'servo':
    the drives clip their own torque (a current limit in current-based position mode, at
    the servo's rate, as a trained PD with clipped torque does), so the node does not clamp
    targets for it; for servos whose current limit is configured or commanded
    (current_limit_topic). Position limits and the slew cap hold in both."""
    pos_min_rad: list[float] = field(default_factory=list)
    """Lower joint position limits for targets [rad]."""
    pos_max_rad: list[float] = field(default_factory=list)
    """Upper joint position limits for targets [rad]."""
    max_rate_rad_s: list[float] = field(default_factory=list)
    """Largest change of a target per second [rad/s]."""
    relax_max_rate_rad_s: list[float] = field(default_factory=list)
    """Largest change of a target per second while a hold fallback relaxes to
    relax_pose_rad [rad/s], per joint; empty: max_rate_rad_s. The hold itself moves at
    max_rate_rad_s, so a policy trained with a fast cap still stops at once and relaxes
    slowly."""
    joint_vel_limit_rad_s: float = 20.0
    """|qd| beyond this on any joint latches the fallback [rad/s]."""
    joint_state_timeout_s: float = 0.05
    """Joint states older than this latch the fallback [s]."""
    soft_start_s: float = 1.0
    """Length of the soft start after enable [s] (see soft_start_mode)."""
    soft_start_mode: str = 'blend'
    """'blend': targets blend from the measured pose to the policy's; 'stand_up': targets
    move from the measured pose to the default pose with kd stand_up_kd, the policy's output
    is not used (its action history stays zero), then the policy takes over."""
    stand_up_kd: float = 0.0
    """Velocity gain during a 'stand_up' soft start [N m s/rad]; 0: the kd list."""
    fallback: str = 'damping'
    """'damping' (kp 0, kd damping_kd, target = measured q) or 'hold' (hold q at the latch)."""
    hold_s: float = 0.0
    """With fallback 'hold' and a relax_pose_rad: how long the latched pose is held before
    the targets move, rate-limited, to that pose [s]."""
    relax_pose_rad: list[float] = field(default_factory=list)
    """The safe pose a 'hold' fallback relaxes to after hold_s, per joint (joint_names
    order) [rad]; empty: hold the latched pose until disarmed."""
    damping_kd: float = 1.0
    """Velocity gain of the damping fallback [N m s/rad]."""
    diagnostics_period_s: float = 1.0
    """Period of /diagnostics messages [s]."""


def params_class(node_name: str, robot: str) -> type:
    """The dataclass of the policy node's section for a registered robot."""
    if node_name != 'policy_node':
        raise ParamError(f'{node_name}: only the policy node has typed parameters here; the '
                         'bridge checks its own (sim2real.deploy.bridge.params)')
    from sim2real.deploy.robots import runtime_of
    try:
        return runtime_of(robot).params_cls
    except KeyError as exc:
        raise ParamError(f'parameter "robot": {exc.args[0]}') from None


def parameter_defaults(robot: str, node_name: str = 'policy_node') -> dict:
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
    robot = values.get('robot', '')
    cls = params_class(node_name, robot)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    hints = typing.get_type_hints(cls)
    for key, value in values.items():
        if key not in fields:
            raise unknown_parameter(node_name, key, fields)
        values[key] = _coerce(key, value, hints[key])
        length = fields[key].metadata.get('length')
        if length is not None and len(values[key]) != length:
            raise ParamError(f'parameter "{key}" must be a list of {length} numbers, '
                             f'got {value!r}')
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
    if hint is bool:
        if not isinstance(value, bool):
            raise bad('true or false')
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
    return [_coerce(f'{key}[{i}]', v, item) for i, v in enumerate(value)]
