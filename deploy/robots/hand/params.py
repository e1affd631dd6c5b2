"""Node parameters of the hand's policy node (config/hand.yaml, section policy_node): the
joint chain's and the fingertip guard's."""

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
class HandParams(FingertipGuardParams, JointParams):
    """Parameters of the hand's policy node (JointParams' fields first)."""
