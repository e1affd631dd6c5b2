"""Pieces a joint robot composes onto the generic joint chain (`joints.JointProfile`).

Each part brings its parameters (a dataclass a robot's params inherit), its streams (the
arrays each sample holds), its watchdogs, its latches and the observation inputs it fills.
A floating-base robot adds the base IMU; a commanded one the velocity-command stream; a
legged one leg odometry; a hand the tracked pose of the object it holds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from sim2real.assets import urdf_path
from sim2real.contract import Contract, ContractError
from sim2real.deploy.runtime.contract_check import positive
from sim2real.deploy.runtime.leg_odometry import LegOdometry
from sim2real.deploy.runtime.params import ParamError
from sim2real.deploy.runtime.sensors import rotmat_from_quat, SensorStore, Watchdog


class JointPart(Protocol):
    """What the joint chain asks of a part."""

    shapes: dict[str, dict[str, tuple[int, ...]]]
    """Stream -> array name -> shape, for the sensor store."""
    watchdogs: list[Watchdog]
    """Staleness checks of the part's streams, in the order they are reported."""
    early: bool
    """Latch checks before the joint checks (True) or after them."""

    def latch_reason(self, store: SensorStore, now_s: float, profile) -> str:
        """A latch reason ('' when none holds)."""

    def observation_inputs(self, store: SensorStore, now_s: float) -> dict:
        """Term inputs the part fills."""

    def on_enable(self, store: SensorStore, now_s: float) -> None:
        """Arming: restart what the part estimates."""

    def update(self, store: SensorStore, profile) -> None:
        """Once per tick, after the command is final."""


class PartBase:
    """Defaults of a part that has nothing to do at some of the hooks (a robot's own parts,
    such as a tracked target, subclass it)."""

    shapes: dict = {}
    watchdogs: list = []
    early = False

    def latch_reason(self, store: SensorStore, now_s: float, profile) -> str:
        """No latch."""
        return ''

    def observation_inputs(self, store: SensorStore, now_s: float) -> dict:
        """No inputs."""
        return {}

    def on_enable(self, store: SensorStore, now_s: float) -> None:
        """Nothing to restart."""

    def update(self, store: SensorStore, profile) -> None:
        """Nothing to update."""

    def estimates(self) -> dict[str, np.ndarray]:
        """No estimate of its own."""
        return {}


@dataclass
class BaseImuParams:
    """Parameters of a floating base's IMU (sensor_msgs/Imu with orientation)."""

    imu_topic: str = 'imu'
    """Base IMU topic (sensor_msgs/Imu with orientation)."""
    imu_timeout_s: float = 0.05
    """IMU older than this latches the fallback [s]; 0: no IMU stream required."""
    max_tilt_rad: float = 1.0
    """Base tilt beyond which the fallback latches [rad]."""


class BaseImu(PartBase):
    """Floating-base IMU: orientation and gyro for the terms, the tilt latch."""

    early = True

    def __init__(self, contract: Contract, params: BaseImuParams):
        """The IMU stream's watchdog and the tilt limit from params."""
        positive(params, 'max_tilt_rad')
        self.shapes = {'imu': {'quat_wxyz': (4,), 'ang_vel_b': (3,)}}
        self.watchdogs = [Watchdog('imu', params.imu_timeout_s, 'imu_timeout_s',
                                   params.imu_topic)]
        self.cos_max_tilt = math.cos(params.max_tilt_rad)

    def latch_reason(self, store: SensorStore, now_s: float, profile) -> str:
        """'tilt' when the base leans past max_tilt_rad."""
        if store.latest('imu') is not None:
            rotmat = rotmat_from_quat(store.value('imu', 'quat_wxyz'))
            if not rotmat[2, 2] >= self.cos_max_tilt:
                return 'tilt'
        return ''

    def observation_inputs(self, store: SensorStore, now_s: float) -> dict:
        """rotmat_wb and ang_vel_b (level and still before the first sample)."""
        imu = store.latest('imu')
        if imu is None:
            return {'rotmat_wb': np.eye(3), 'ang_vel_b': np.zeros(3)}
        return {'rotmat_wb': rotmat_from_quat(store.value('imu', 'quat_wxyz')),
                'ang_vel_b': store.value('imu', 'ang_vel_b')}


@dataclass
class VelocityCommandParams:
    """Parameters of a velocity-command stream (geometry_msgs/Twist)."""

    velocity_command_topic: str = 'cmd_vel'
    """Velocity command topic (geometry_msgs/Twist)."""
    command_timeout_s: float = 0.0
    """Velocity command older than this latches the fallback [s]; 0: not required."""
    velocity_command_limit: list[float] = field(default_factory=lambda: [1.0, 0.5, 1.0],
                                                metadata={'length': 3})
    """|vx| [m/s], |vy| [m/s], |yaw rate| [rad/s] the velocity command is clipped to."""


class VelocityCommand(PartBase):
    """(vx, vy, yaw rate) commands, clipped to their limits; zero before the first."""

    def __init__(self, contract: Contract, params: VelocityCommandParams):
        """The command stream's watchdog and limits from params."""
        self.shapes = {'command': {'velocity_command': (3,)}}
        self.watchdogs = [Watchdog('command', params.command_timeout_s, 'command_timeout_s',
                                   params.velocity_command_topic)]
        self.limit = np.asarray(params.velocity_command_limit, dtype=np.float64)

    def observation_inputs(self, store: SensorStore, now_s: float) -> dict:
        """velocity_command [m/s, m/s, rad/s; heading frame]."""
        command = store.value('command', 'velocity_command')
        if command is None:
            return {'velocity_command': np.zeros(3)}
        return {'velocity_command': np.clip(command, -self.limit, self.limit)}


@dataclass
class LegOdometryParams:
    """Parameters of leg odometry (needs the base IMU and the contract's feet)."""

    leg_odometry_max_speed_m_s: float = 0.0
    """Leg-odometry base speed (xy, filtered) beyond which the fallback latches [m/s];
    0: no latch (the estimate is still computed when the contract names the feet)."""
    foot_force_topic: str = ''
    """Foot force or contact readings (std_msgs/Float64MultiArray, one per foot in the
    contract's foot_names order; e.g. a Go2's LowState.foot_force relayed); '': stance from
    the legs' kinematics alone."""
    foot_contact_threshold: float = 20.0
    """A foot reading above this is contact, in the sensor's own units (open-source Go2
    deployments use 20-40 of its raw foot_force counts)."""


class LegOdometryPart(PartBase):
    """Pinocchio leg odometry every tick when the contract names the feet; its speed latch,
    and the base velocity a policy that observes lin_vel_b reads (an imported Isaac Lab
    policy: our own quadruped policies do not observe it)."""

    def __init__(self, contract: Contract, params: LegOdometryParams):
        """Kinematics of the URDF in contract joint order (none without feet)."""
        if not params.leg_odometry_max_speed_m_s >= 0.0:
            raise ParamError('parameter "leg_odometry_max_speed_m_s": must be >= 0, got '
                             f'{params.leg_odometry_max_speed_m_s}')
        self.limit_m_s = params.leg_odometry_max_speed_m_s
        self.joint_vel_limit_rad_s = params.joint_vel_limit_rad_s
        feet = contract.robot_params.get('foot_names')
        if self.limit_m_s > 0.0 and not feet:
            raise ContractError(
                'robot_params.foot_names: required by parameter leg_odometry_max_speed_m_s '
                f'({self.limit_m_s} m/s, the leg-odometry latch)')
        try:
            self.odometry = None if not feet else LegOdometry(
                urdf_path(params.urdf_file), list(contract.joint_names), feet)
        except ValueError as exc:   # feet or joints the URDF does not have
            raise ContractError(f'robot_params.foot_names: {exc}') from exc
        self._used = None
        """The joint-state sample of the latest estimate."""
        self.observes_velocity = any(t.name == 'lin_vel_b' for t in contract.observations)
        if self.observes_velocity and self.odometry is None:
            raise ContractError('observation lin_vel_b: estimated by leg odometry, which '
                                'needs robot_params.foot_names')
        self.contact_threshold = params.foot_contact_threshold
        self.contact_max_age_s = params.joint_state_timeout_s
        """Largest time between a foot reading and the joint state it is used with [s]."""
        if params.foot_force_topic and self.odometry is not None:
            self.shapes = {'foot_force': {'force': (len(feet),)}}

    def observation_inputs(self, store: SensorStore, now_s: float) -> dict:
        """lin_vel_b [m/s; body frame]: the leg-odometry estimate (zero before the first),
        when the contract observes it."""
        if not self.observes_velocity:
            return {}
        return {'lin_vel_b': self.odometry.lin_vel_b.copy()}

    def latch_reason(self, store: SensorStore, now_s: float, profile) -> str:
        """'leg_odometry' when the filtered speed passes the limit (0: never)."""
        if self.odometry is not None and self.limit_m_s > 0.0 and not (
                self.odometry.speed_xy_m_s <= self.limit_m_s):
            return 'leg_odometry'
        return ''

    def on_enable(self, store: SensorStore, now_s: float) -> None:
        """Forget the estimate."""
        if self.odometry is not None:
            self.odometry.reset()

    def update(self, store: SensorStore, profile) -> None:
        """An estimate from each new joint-state sample (one sample that stays fresh over
        several ticks counts once in the filtered speed) and the latest imu; joint velocities
        outside the joint-velocity latch's domain reset it (that latch covers them)."""
        imu, joints = store.latest('imu'), store.latest('joint_state')
        if self.odometry is None or imu is None or joints is None or joints is self._used:
            return
        self._used = joints
        q, qd = profile.joint_state(store)
        if not np.all(np.abs(qd) <= self.joint_vel_limit_rad_s):
            self.odometry.reset()
            return
        self.odometry.update(q, qd, store.value('imu', 'ang_vel_b'),
                             rotmat_from_quat(store.value('imu', 'quat_wxyz')),
                             self.contact(store, joints))

    def estimates(self) -> dict[str, np.ndarray]:
        """The leg-odometry base velocity [m/s; body frame] (none without the feet)."""
        if self.odometry is None:
            return {}
        return {'leg_odometry_lin_vel_b_m_s': np.asarray(self.odometry.lin_vel_b).copy()}

    def contact(self, store: SensorStore, joints) -> np.ndarray | None:
        """Measured contact per foot of a foot reading received within contact_max_age_s of
        the joint-state sample joints; None without one."""
        force = store.latest('foot_force')
        if force is None or not abs(force.received_s - joints.received_s) <= (
                self.contact_max_age_s):
            return None
        return np.asarray(force.values['force']) > self.contact_threshold
