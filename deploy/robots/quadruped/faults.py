"""The quadruped twin's own HIL faults.

- ``push``: a runaway the legs did not command: the base is pushed along its heading with
  PUSH_FORCE_N whenever it moves slower than PUSH_SPEED_M_S over the ground, for as long as
  the fault is on (a robot dragged at 3 m/s). The node must fall back: its leg-odometry
  latch (``leg_odometry_max_speed_m_s``, 2.5 m/s in config/quadruped.yaml) sees the runaway,
  or its tilt latch the stumble (hil.PUSH_TICKS: sliding feet blind the odometry). Its
  effect is the first joint-state sample published after the true horizontal speed passed
  EFFECT_SPEED_M_S, the latch's threshold.
"""

from __future__ import annotations

import numpy as np

from sim2real import terms
from sim2real.deploy.bridge.faults import RobotFault

PUSH_FORCE_N = 300.0
"""Horizontal force on the base while pushing [N] (about 2 g on the 15 kg Go2)."""
PUSH_SPEED_M_S = 3.0
"""True horizontal speed the push holds [m/s]."""
EFFECT_SPEED_M_S = 2.5
"""True horizontal speed from which the node's latch can hold (its threshold) [m/s]."""
BASE_BODY_ID = 1
"""MuJoCo id of the floating base (the model's first body after the world)."""


class Push:
    """Pushes the base along its heading below PUSH_SPEED_M_S; remembers when it was fast."""

    def __init__(self):
        """Not pushing."""
        self.reset()

    def reset(self) -> None:
        """A new onset: not fast yet."""
        self.fast = False

    def act(self, sim, since_s: float | None) -> None:
        """Before a physics step: the force while on and below the speed, else none."""
        force = sim.data.xfrc_applied[BASE_BODY_ID]
        force[:] = 0.0
        if since_s is None:
            return
        speed = float(np.linalg.norm(sim.data.qvel[0:2]))
        self.fast |= speed >= EFFECT_SPEED_M_S
        if speed < PUSH_SPEED_M_S:
            heading = terms.quat_to_rotmat(sim.data.qpos[3:7])[:, 0]
            heading[2] = 0.0
            force[0:3] = PUSH_FORCE_N * heading / max(np.linalg.norm(heading), 1e-9)

    def effect(self, offered: dict, published: dict) -> bool:
        """Whether the base has been faster than EFFECT_SPEED_M_S."""
        return self.fast


def quadruped_faults() -> dict[str, RobotFault]:
    """The quadruped twin's own faults (fresh objects: each bridge keeps its own state)."""
    push = Push()
    return {'push': RobotFault('joint_states', lambda values, since_s: values, act=push.act,
                               effect=push.effect, reset=push.reset)}
