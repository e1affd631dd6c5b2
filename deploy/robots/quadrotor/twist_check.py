"""Does the odometry's twist agree with the motion of its position?

nav_msgs/Odometry carries the twist in the body frame (child_frame_id); some drivers put a
world-frame velocity there (crazyswarm2's C++ server fills it from the firmware's
``stateEstimateZ.vx/vy/vz``, which are world-frame). A policy fed a rotated velocity flies
away; nothing else in the chain notices. Over the distinct odometry samples of the last
``window_s`` (by their stamps), the position's displacement must equal the integral of the
twist rotated into the world (trapezoid rule):

    r = (p_k - p_j) - sum_i (R_i v_i + R_i+1 v_i+1) / 2 (t_i+1 - t_i)

Position noise enters r once (the displacement telescopes), however many samples the window
holds, so a window of 0.2 s sees a twist wrong by 0.15 m/s at a tolerance of 3 cm. |r| above
``tolerance_m`` is a latch ('odom_twist') and refuses an enable; the residual of the other
frame's reading (the twist taken as world-frame) says which frame fits, for the operator.
A position glitch (a jump no twist explains) fails the same check.
"""

from __future__ import annotations

import collections
import math

import numpy as np

from sim2real.deploy.runtime.sensors import rotation_entries, Sample

MIN_SPAN = 0.5
"""The samples must span this share of the window before the check judges."""
RESUM_EVERY = 256
"""Samples after which the running sums are summed afresh from the window's segments (no
rounding error builds up over a long flight)."""
MAX_SAMPLES = 200
"""Most samples the window keeps (1 kHz odometry over 0.2 s); a source whose stamps crawl
cannot grow it further."""


def twist_residual_m(stamps_s: np.ndarray, pos_w: np.ndarray, vel_w: np.ndarray) -> float:
    """|displacement - integral of the velocity| [m] over samples (stamps [s], positions
    [m; world] and velocities [m/s; world], (n,) (n, 3) (n, 3)); 0 for fewer than 2."""
    if len(stamps_s) < 2:
        return 0.0
    dt = np.diff(stamps_s)[:, None]
    travelled = np.sum(0.5 * (vel_w[1:] + vel_w[:-1]) * dt, axis=0)
    return float(np.linalg.norm(pos_w[-1] - pos_w[0] - travelled))


class TwistCheck:
    """The residual of the last window of distinct odometry samples, in both frames."""

    def __init__(self, window_s: float, tolerance_m: float, frame: str = 'body'):
        """Window [s], tolerance [m] (0 switches the check off) and the frame the odometry
        message's twist is read in ('body' or 'world'; the sample holds it in the body)."""
        self.window_s, self.tolerance_m, self.frame = window_s, tolerance_m, frame
        self._samples: collections.deque = collections.deque()
        """(stamp [s], position (x, y, z) [m; world], velocity [m/s; world] as read and as
        the other frame's reading, six floats)."""
        self._segments: collections.deque = collections.deque()
        """The trapezoid segment between each pair of consecutive samples [m], six floats
        (as read, other)."""
        self._travelled_w = [0.0] * 6
        self._appended = 0
        self._seen: Sample | None = None
        self.residual_m = 0.0
        """Residual of the twist as the node reads it (body frame) [m]."""
        self.other_residual_m = 0.0
        """Residual if the twist were world-frame [m]."""

    def reset(self) -> None:
        """Forget the samples."""
        self._samples.clear()
        self._segments.clear()
        self._travelled_w = [0.0] * 6
        self._appended = 0
        self._seen = None
        self.residual_m = self.other_residual_m = 0.0

    def observe(self, sample: Sample | None) -> None:
        """Add the latest odometry sample (once; None: nothing new).

        Runs every tick, in scalar arithmetic (numpy's per-call cost dominates on 3-vectors):
        the window's travelled distance in both readings is kept as a running sum of its
        trapezoid segments (added as a sample comes, taken off as the oldest goes, summed
        afresh every RESUM_EVERY samples), not rebuilt from the window."""
        if self.tolerance_m <= 0.0 or sample is None or sample is self._seen:
            return
        self._seen = sample
        stamp = sample.stamp_s
        if self._samples and not stamp > self._samples[-1][0]:
            self.reset()   # the source's stamps restarted: start over
            self._seen = sample
        both = self._velocities_w(sample)
        if self._samples:
            last_stamp, _, last = self._samples[-1]
            dt = stamp - last_stamp
            segment = tuple(0.5 * (a + b) * dt for a, b in zip(last, both))
            self._segments.append(segment)
            self._travelled_w = [t + d for t, d in zip(self._travelled_w, segment)]
        pos = tuple(np.asarray(sample.values['pos_w'], dtype=np.float64).tolist())
        self._samples.append((stamp, pos, both))
        while self._samples and (stamp - self._samples[0][0] > self.window_s
                                 or len(self._samples) > MAX_SAMPLES):
            self._samples.popleft()
            if self._segments:
                gone = self._segments.popleft()
                self._travelled_w = [t - d for t, d in zip(self._travelled_w, gone)]
        self._appended += 1
        if self._appended % RESUM_EVERY == 0 and self._segments:
            self._travelled_w = [math.fsum(column) for column in zip(*self._segments)]
        self._judge()

    def _velocities_w(self, sample: Sample) -> tuple[float, ...]:
        """The message's twist rotated into the world as read, then the other reading of it
        (a body-frame message taken as world, or a world-frame one, converted with R^T at
        entry, taken as body): six floats [m/s]."""
        r0, r1, r2, r3, r4, r5, r6, r7, r8 = rotation_entries(sample.values['quat_wxyz'])
        vx, vy, vz = np.asarray(sample.values['lin_vel_b'], dtype=np.float64).tolist()
        wx, wy, wz = (r0 * vx + r1 * vy + r2 * vz, r3 * vx + r4 * vy + r5 * vz,
                      r6 * vx + r7 * vy + r8 * vz)
        if self.frame == 'body':   # R^T of the world velocity
            return (wx, wy, wz, r0 * wx + r3 * wy + r6 * wz, r1 * wx + r4 * wy + r7 * wz,
                    r2 * wx + r5 * wy + r8 * wz)
        return (wx, wy, wz, r0 * wx + r1 * wy + r2 * wz, r3 * wx + r4 * wy + r5 * wz,
                r6 * wx + r7 * wy + r8 * wz)

    def _judge(self) -> None:
        """Residuals of the window's samples when they span enough of it, else 0."""
        first, last = self._samples[0], self._samples[-1]
        if len(self._samples) < 2 or last[0] - first[0] < MIN_SPAN * self.window_s:
            self.residual_m = self.other_residual_m = 0.0
            return
        dx, dy, dz = (b - a for a, b in zip(first[1], last[1]))
        t = self._travelled_w
        self.residual_m = math.hypot(dx - t[0], dy - t[1], dz - t[2])
        self.other_residual_m = math.hypot(dx - t[3], dy - t[4], dz - t[5])

    @property
    def failed(self) -> bool:
        """Whether the twist disagrees with the position's motion beyond the tolerance."""
        return self.tolerance_m > 0.0 and not self.residual_m <= self.tolerance_m

    def explain(self) -> str:
        """Why the check failed, for an operator."""
        other = 'world' if self.frame == 'body' else 'body'
        hint = (f'; the twist fits a {other}-frame velocity: check odom_twist_frame'
                if self.other_residual_m <= self.tolerance_m else
                '; a position jump or a wrong velocity')
        return (f'the odometry twist (odom_twist_frame {self.frame}) disagrees with the '
                f'motion of its position by {self.residual_m:.3g} m over {self.window_s:g} s '
                f'(odom_twist_tolerance_m {self.tolerance_m:g}){hint}')
