"""Node parameters of the toyarm policy node: the joint chain's and the target stream's."""

from __future__ import annotations

from dataclasses import dataclass

from sim2real.deploy.runtime.params import JointParams


@dataclass
class TargetParams:
    """Parameters of the reach target stream (geometry_msgs/PointStamped, base frame)."""

    target_topic: str = 'target'
    """Reach target topic (geometry_msgs/PointStamped; x, y in the base frame [m])."""
    target_timeout_s: float = 0.0
    """Target older than this latches the fallback [s]; 0: not required (a target, once
    received, holds)."""


@dataclass
class ToyArmParams(TargetParams, JointParams):
    """Parameters of the toyarm policy node (JointParams' fields first)."""
