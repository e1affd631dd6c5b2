"""Node parameters of the hand's policy node (config/hand.yaml, section policy_node): the
joint chain's, the fingertip guard's and the object tracker's."""

from __future__ import annotations

from dataclasses import dataclass, field

from sim2real.deploy.runtime.params import JointParams


@dataclass
class FingertipGuardParams:
    """The fingertip guard: Pinocchio forward kinematics of the measured joints every tick."""

    min_fingertip_distance_m: float = 0.025
    """Fingertip pad centres closer than this latch the fallback [m]: two 11 mm pads touch at
    0.022 m, so 0.025 keeps 3 mm between their surfaces; 0: no distance check."""
    workspace_min_m: list[float] = field(default_factory=lambda: [-0.12, -0.15, 0.2])
    """Lower corner of the box every fingertip must stay in [m; URDF root frame]."""
    workspace_max_m: list[float] = field(default_factory=lambda: [0.22, 0.15, 0.42])
    """Upper corner of the box every fingertip must stay in [m; URDF root frame]."""


@dataclass
class ObjectTrackerParams:
    """The held object's tracked pose and its goal orientation, read only by policies whose
    contract observes them (hand-reorient); a proprioceptive policy subscribes to neither."""

    object_pose_topic: str = 'cube_pose'
    """Tracked object pose (geometry_msgs/PoseStamped) [m; the hand's root frame]."""
    object_pose_timeout_s: float = 0.3
    """A tracked pose older than this latches the fallback [s] (training refreshes it at
    least every 4 ticks with up to 2 ticks of latency: 0.3 s at 20 Hz)."""
    goal_topic: str = 'cube_goal'
    """Goal orientation of the object (geometry_msgs/PoseStamped; its position is unused);
    the identity until the first goal arrives."""


@dataclass
class CurrentLimitParams:
    """The servos' current limit, published beside the targets for a driver that sets it
    (Dynamixel Goal Current, register 102 on the X series)."""

    current_limit_topic: str = ''
    """Per-joint current limits [A] (std_msgs/Float64MultiArray, contract order) with each
    target message; '' publishes none (the servos keep their configured limit)."""
    torque_constant_nm_per_a: float = 0.52
    """Torque per ampere of the servos: the limit is torque_limit_nm / this [N m/A] (XC330:
    stall 0.93 N m at 1.8 A, linear; derived in urdf/README.md, not measured)."""


@dataclass
class HandParams(CurrentLimitParams, ObjectTrackerParams, FingertipGuardParams, JointParams):
    """Parameters of the hand's policy node (JointParams' fields first)."""
