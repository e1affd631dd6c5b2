"""sim_bridge parameters: the declared defaults per robot and their validation (ROS-free).

A robot's folder declares its twin (``bridge.BRIDGE``, a RobotBridge): its own parameters,
its sensor streams, their checks and its simulation. The node declares those beside
COMMON_DEFAULTS (typed by their default values); ``validate`` names the first invalid
parameter; fault names are checked against the sensor streams the robot has.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from sim2real.deploy.bridge import physical
from sim2real.deploy.bridge.variant import (
    DEFAULTS as VARIANT_DEFAULTS, delays as variant_delays, Knob, SENSOR_DELAY, VariantError)
from sim2real.deploy.bridge.faults import (
    FaultCfg, FaultError, fault_names as stream_fault_names, parse_fault_list, parse_schedule,
    RobotFault)
from sim2real.deploy.robots import robot_module

COMMON_DEFAULTS = {
    'physics_rate_hz': 500.0,
    'ground_truth_rate_hz': 100.0,
    'command_timeout_s': 0.1,
    'imu_gyro_noise_std_rad_s': 0.0,
    'seed': 0,
    'fault_schedule': '',
    'active_faults': '',
    'fault_drop_probability': 0.3,
    'fault_delay_s': 0.01,
    'fault_delay_jitter_s': 0.005,
    'fault_spike_s': 0.2,
    'sensor_latency_s': 0.0,
    'sensor_latency_jitter_s': 0.0,
    'record_dir': '',
    **physical.DEFAULTS,
    **VARIANT_DEFAULTS,
}
"""What every robot's bridge declares: physics, ground truth, the command watchdog, noise,
the fault injector's parameters, record_dir (a folder: record the ground truth and events to
MCAP there; '': no recording), the floating body's true mass (`physical`) and a variant of
the robot's physical parameters by their box names (`variant`)."""


@dataclass(frozen=True)
class RobotBridge:
    """A robot's simulated twin, as the bridge node runs it (ROS-free)."""

    defaults: dict
    """The robot's own parameters and their defaults (robot, urdf_file, topics, rates of
    its streams as '<stream>_rate_hz'), declared beside COMMON_DEFAULTS."""
    streams: tuple[str, ...]
    """Its sensor streams, as the fault injector names them."""
    checks: Callable[[dict], list]
    """checks(p) -> [(name, ok, why)] of its own parameters."""
    make_sim: Callable[[dict], object]
    """The simulation for the parameters p (step, reset, the stream methods, ...)."""
    faults: Callable[[], dict[str, RobotFault]] = dict
    """faults() -> the robot's own faults beside the generic and per-stream ones (faults.py),
    fresh objects each call: a fault may keep state for the bridge that owns it."""
    variant: Callable[[], dict[str, Knob]] = dict
    """variant() -> its randomization box's parameters as the twin takes them (by name)."""


def bridge_of(robot: str) -> RobotBridge:
    """The registered robot's bridge; ValueError listing the robots."""
    try:
        return robot_module(robot, 'bridge').BRIDGE
    except KeyError as exc:
        raise ValueError(f'sim_bridge parameter robot={robot!r}: {exc.args[0]}') from None


def declared_parameters(robot: str) -> dict:
    """Names and defaults of every parameter the bridge declares for a robot."""
    return {**COMMON_DEFAULTS, **bridge_of(robot).defaults}


def fault_names(robot: str) -> tuple[str, ...]:
    """The fault names a robot's bridge accepts (faults of its own sensor streams and its
    own faults)."""
    bridge = bridge_of(robot)
    return stream_fault_names(bridge.streams, bridge.faults())


def parse_robot_faults(robot: str, text: str) -> tuple[str, ...]:
    """parse_fault_list, also rejecting faults of streams this robot does not have."""
    names = parse_fault_list(text, extra=bridge_of(robot).faults())
    foreign = [n for n in names if n not in fault_names(robot)]
    if foreign:
        raise FaultError(f'fault(s) {", ".join(map(repr, foreign))} do not apply to the '
                         f'{robot}; valid: {", ".join(fault_names(robot))}')
    return names


def validate(p: dict) -> None:
    """Raise ValueError naming the first invalid parameter."""
    robot = p['robot']
    bridge = bridge_of(robot)
    streams = bridge.streams
    checks = [
        *bridge.checks(p),
        *physical.checks(p),
        ('physics_rate_hz', p['physics_rate_hz'] > 0, 'must be > 0'),
        ('command_timeout_s', p['command_timeout_s'] > 0, 'must be > 0'),
        ('fault_drop_probability', 0 <= p['fault_drop_probability'] <= 1, 'must be in [0, 1]'),
        ('fault_delay_s', p['fault_delay_s'] >= 0, 'must be >= 0'),
        ('fault_delay_jitter_s', p['fault_delay_jitter_s'] >= 0, 'must be >= 0'),
        ('fault_spike_s', p['fault_spike_s'] >= 0, 'must be >= 0'),
        ('sensor_latency_s', p['sensor_latency_s'] >= 0, 'must be >= 0'),
        ('sensor_latency_jitter_s', p['sensor_latency_jitter_s'] >= 0, 'must be >= 0'),
        ('policy_tick_s', p['policy_tick_s'] >= 0, 'must be >= 0'),
        ('policy_substep_s', p['policy_substep_s'] >= 0, 'must be >= 0'),
    ] + [(k, 0 < p[k] <= p['physics_rate_hz'], 'must be in (0, physics_rate_hz]')
         for k in (*(f'{s}_rate_hz' for s in streams), 'ground_truth_rate_hz')]
    for name, ok, why in checks:
        if not ok:
            raise ValueError(f'sim_bridge parameter {name}={p[name]!r}: {why}')
    try:
        variant_delays(p, bridge.variant())
    except VariantError as exc:
        raise ValueError(f'sim_bridge parameter {exc}') from None
    for name in ('fault_schedule', 'active_faults'):
        try:
            text = p[name] if name == 'active_faults' else ','.join(
                f.name for f in parse_schedule(p[name], extra=bridge.faults()))
            parse_robot_faults(robot, text)
        except FaultError as exc:
            raise ValueError(f'sim_bridge parameter {name}: {exc}') from exc


def fault_cfg(p: dict) -> FaultCfg:
    """The fault injector's magnitudes and the nominal sensor latency from bridge params
    (with the variant's sensor delay)."""
    extra_s = variant_delays(p, bridge_of(p['robot']).variant())[SENSOR_DELAY]
    return FaultCfg(p['fault_drop_probability'], p['fault_delay_s'], p['fault_delay_jitter_s'],
                    p['fault_spike_s'], p['sensor_latency_s'] + extra_s,
                    p['sensor_latency_jitter_s'])
