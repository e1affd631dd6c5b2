"""A tracked body's pose as a motion-capture system or a camera pose estimator reports it.

Per env: a new sample every ``refresh_ticks`` control ticks (a 20 Hz policy reading a 10 Hz
camera refreshes every 2 ticks), taken ``latency_ticks`` ticks late, with Gaussian position
noise and a rotation-vector noise on the orientation, held unchanged between samples.
DeXtreme found the cube pose's refresh rate and delay decisive for transfer and randomized
both (refresh every 1-6 ticks; research/hand.md 2.6); MuJoCo Playground's LEAP reorientation
adds 2 cm and 0.1 rad noise.

Array-API code: torch in the training scene, numpy in the HIL bridge's simulated tracker. The
caller draws the standard normal noise (its own generator), so one model serves both.
"""

from __future__ import annotations

from array_api_compat import array_namespace

from sim2real import terms
from sim2real.sim.delay import DelayBuffer
from sim2real.sim.state import Stateful


class PoseTracker(Stateful):
    """Delayed, refreshed, noisy samples (position [m], quaternion w, x, y, z) of one body."""

    STATE = ('refresh_ticks', 'age_ticks', 'pos_noise_std_m', 'rot_noise_std_rad', 'pos_m',
             'quat_wxyz', 'fresh')
    CHILDREN = ('_line',)

    def __init__(self, num_envs: int, max_latency_ticks: int, xp, dtype, device=None):
        """Every env refreshed each tick, no latency, no noise; the pose at the origin."""
        self._line = DelayBuffer(num_envs, (7,), max_latency_ticks, xp, dtype, device)
        self.xp = xp = array_namespace(self._line.delay_ticks)
        kwargs = {} if device is None else {'device': device}
        # the identity orientation before the first push
        identity = xp.asarray([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0], dtype=dtype, **kwargs)
        self._line.reset(xp.arange(num_envs, **kwargs), identity)
        self.refresh_ticks = xp.ones((num_envs,), dtype=xp.int64, **kwargs)
        """Control ticks between two samples, (N,) (1: every tick)."""
        self.age_ticks = xp.zeros((num_envs,), dtype=xp.int64, **kwargs)
        """Ticks since the held sample was taken, (N,)."""
        self.pos_noise_std_m = xp.zeros((num_envs,), dtype=dtype, **kwargs)
        """Standard deviation of each position coordinate's noise [m], (N,)."""
        self.rot_noise_std_rad = xp.zeros((num_envs,), dtype=dtype, **kwargs)
        """Standard deviation of each rotation-vector component of the noise [rad], (N,)."""
        self.pos_m = xp.zeros((num_envs, 3), dtype=dtype, **kwargs)
        """The held sample's position [m; the tracker's frame], (N, 3)."""
        self.quat_wxyz = xp.zeros((num_envs, 4), dtype=dtype, **kwargs)
        """The held sample's orientation, (N, 4)."""
        self.quat_wxyz[:, 0] = 1.0
        self.fresh = xp.zeros((num_envs,), dtype=xp.bool, **kwargs)
        """Which envs took a new sample at the last update, (N,)."""

    @property
    def latency_ticks(self):
        """Per-env latency of a sample [control ticks], (N,)."""
        return self._line.delay_ticks

    def configure(self, env_ids, refresh_ticks, latency_ticks, pos_noise_std_m,
                  rot_noise_std_rad) -> None:
        """Refresh period [ticks, >= 1], latency [ticks], noise [m, rad] of env_ids (scalars or
        one value per env)."""
        if bool(self.xp.any(self.xp.asarray(refresh_ticks) < 1)):
            raise ValueError('a tracker refreshes at least every tick: refresh_ticks >= 1')
        self.refresh_ticks[env_ids] = refresh_ticks
        self._line.set_delay(env_ids, latency_ticks)
        self.pos_noise_std_m[env_ids] = pos_noise_std_m
        self.rot_noise_std_rad[env_ids] = rot_noise_std_rad

    def reset(self, env_ids, pos_m, quat_wxyz) -> None:
        """Restart env_ids at this exact pose: its whole history and the held sample, which
        the next refresh replaces (refresh_ticks ticks from now)."""
        xp = self.xp
        pose = xp.concat([pos_m, quat_wxyz], axis=-1)
        self._line.reset(env_ids, pose)
        self.pos_m[env_ids] = pos_m
        self.quat_wxyz[env_ids] = quat_wxyz
        self.age_ticks[env_ids] = 0
        self.fresh[env_ids] = False

    def update(self, pos_m, quat_wxyz, pos_normal, rot_normal) -> None:
        """One control tick of every env: record the true pose (N, 3), (N, 4); envs due for a
        refresh take the pose of latency_ticks ago plus noise (pos_normal, rot_normal: (N, 3)
        standard normal draws each, scaled by the per-env deviations)."""
        xp = self.xp
        self._line.push(xp.concat([pos_m, quat_wxyz], axis=-1))
        self.age_ticks += 1
        due = self.age_ticks >= self.refresh_ticks
        sample = self._line.delayed()
        pos = sample[:, :3] + pos_normal * self.pos_noise_std_m[:, None]
        noise = terms.quat_from_rotvec(rot_normal * self.rot_noise_std_rad[:, None])
        quat = terms.quat_mul(noise, sample[:, 3:])
        quat = quat / xp.sqrt(xp.sum(quat * quat, axis=-1, keepdims=True))
        self.pos_m = xp.where(due[:, None], pos, self.pos_m)
        self.quat_wxyz = xp.where(due[:, None], quat, self.quat_wxyz)
        self.age_ticks = xp.where(due, 0, self.age_ticks)
        self.fresh = due
