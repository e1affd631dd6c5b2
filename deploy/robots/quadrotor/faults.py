"""The quadrotor twin's own HIL faults: what an odometry source can get wrong.

- ``glitch_odom``: one odometry sample at GLITCH_Z_M (an estimator glitch: the vehicle read
  at the ground), then GLITCH_GAP_S without odometry (shorter than the node's 50 ms stale
  timeout: a stalled estimator or DDS jitter), then normal samples. The vehicle must stay in
  the air: flown through, or in the level-and-descend fallback; never motors-off above the
  ground.
- ``twist_frame_odom``: the driver publishes the twist in the other frame than the one it
  is configured for (and the node reads): world instead of body (a crazyswarm2 C++ server,
  which fills it from the firmware's world-frame ``stateEstimateZ.v*``, behind a node set up
  for nav_msgs' body frame), or body instead of world. Its effect is the first published
  sample at which the node's twist check (twist_check.py, at its default window and
  tolerance) could see it: the residual of the exact published positions against the
  twist as the node reads it.
"""

from __future__ import annotations

import collections

import numpy as np

from sim2real import terms
from sim2real.deploy.bridge.faults import RobotFault
from sim2real.deploy.robots.quadrotor.params import QuadrotorParams
from sim2real.deploy.robots.quadrotor.twist_check import MIN_SPAN, twist_residual_m

GLITCH_Z_M = 0.0
"""Height the glitched sample reads [m] (inside the geofence, below ground_height_m)."""
GLITCH_GAP_S = 0.03
"""Odometry withheld after the glitched sample [s]."""


class OdomGlitch:
    """One sample at GLITCH_Z_M, then GLITCH_GAP_S of silence, then the truth again."""

    def __init__(self):
        """No glitch sent yet."""
        self.sent_s: float | None = None

    def reset(self) -> None:
        """A new onset: the next sample is the glitch."""
        self.sent_s = None

    def __call__(self, values: dict, since_s: float) -> dict | None:
        """The glitched sample, None during the gap, else values."""
        if self.sent_s is None:
            self.sent_s = since_s
            pos_w = np.array(values['pos_w'], dtype=np.float64)
            pos_w[2] = GLITCH_Z_M
            return dict(values, pos_w=pos_w)
        return None if since_s - self.sent_s < GLITCH_GAP_S else values


class OtherFrame:
    """The twist in the frame the driver is not configured to publish (world for a body-frame
    driver, body for a world-frame one); the effect is when the node's twist check, reading
    the driver's configured frame at its default window and tolerance, could see it."""

    def __init__(self, params: QuadrotorParams = QuadrotorParams()):
        """The node's check window and tolerance (its defaults); a body-frame driver."""
        self.window_s = params.odom_twist_window_s
        self.tolerance_m = params.odom_twist_tolerance_m
        self.frame = 'body'
        self.reset()

    def configure(self, p: dict) -> None:
        """The frame the twin's driver publishes (bridge parameter odom_twist_frame)."""
        self.frame = p['odom_twist_frame']

    def reset(self) -> None:
        """Forget the published samples."""
        self._published: collections.deque = collections.deque()

    def __call__(self, values: dict, since_s: float) -> dict:
        """Body-frame values made to come out in the other frame: rotated into the world for
        a body-frame driver; for a world-frame one (which rotates them itself), by R^T so
        that its rotation leaves them in the body."""
        rotmat = terms.quat_to_rotmat(np.asarray(values['quat_wxyz'], dtype=np.float64))
        turn = rotmat if self.frame == 'body' else rotmat.T
        out = dict(values, lin_vel_b=turn @ values['lin_vel_b'],
                   ang_vel_b=turn @ values['ang_vel_b'])
        published = out['lin_vel_b'] if self.frame == 'body' else values['lin_vel_b']
        # the node reads a body-frame message's twist as body (R v for the world) and a
        # world-frame message's as world
        read_w = rotmat @ published if self.frame == 'body' else published
        self._published.append((since_s, np.array(values['pos_w'], dtype=np.float64), read_w))
        while since_s - self._published[0][0] > self.window_s:
            self._published.popleft()
        return out

    def effect(self, offered: dict, published: dict) -> bool:
        """Whether the published window leaves more than the tolerance unexplained."""
        times = np.array([p[0] for p in self._published])
        if len(times) < 2 or times[-1] - times[0] < MIN_SPAN * self.window_s:
            return False
        residual = twist_residual_m(times, np.array([p[1] for p in self._published]),
                                    np.array([p[2] for p in self._published]))
        return residual > self.tolerance_m


def quadrotor_faults() -> dict[str, RobotFault]:
    """The quadrotor twin's own faults (fresh objects: each bridge keeps its own state)."""
    glitch, other = OdomGlitch(), OtherFrame()
    return {
        'glitch_odom': RobotFault('odom', glitch, reset=glitch.reset,
                                  effect=lambda offered, out: out is not offered),
        'twist_frame_odom': RobotFault('odom', other, effect=other.effect, reset=other.reset,
                                       configure=other.configure),
    }
