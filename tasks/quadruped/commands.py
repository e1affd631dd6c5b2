"""Quadruped velocity command: (vx, vy, yaw rate), redrawn every few seconds per env.

Units and frames: ``command[:, 0:2]`` is the commanded base velocity [m/s] along the base's
heading (x forward, y left; legged_gym and Isaac Lab compare it with the body-frame base
velocity, as the tracking rewards here do), ``command[:, 2]`` the commanded yaw rate
[rad/s, positive counter-clockwise seen from above].
"""

from __future__ import annotations

import torch

from sim2real.sim.state import Stateful


class UniformVelocityCommand(Stateful):
    """Commands ~ U(ranges), resampled every resampling_time_s; some envs told to stand."""

    STATE = ('command', 'is_standing', 'time_since_resample_s')
    NOT_STATE = ('env',)

    def __init__(self, env, lin_vel_x_m_s: tuple[float, float] = (-1.0, 1.0),
                 lin_vel_y_m_s: tuple[float, float] = (-0.5, 0.5),
                 ang_vel_z_rad_s: tuple[float, float] = (-1.0, 1.0),
                 resampling_time_s: float = 10.0, standing_fraction: float = 0.1,
                 min_lin_vel_m_s: float = 0.2):
        """Ranges of vx, vy [m/s] and yaw rate [rad/s]; period [s]; share of standing envs;
        xy commands slower than min_lin_vel_m_s are zeroed (legged_gym's 0.2 m/s rule)."""
        self.env = env
        self.ranges = (lin_vel_x_m_s, lin_vel_y_m_s, ang_vel_z_rad_s)
        self.resampling_time_s = resampling_time_s
        self.standing_fraction = standing_fraction
        self.min_lin_vel_m_s = min_lin_vel_m_s
        n = env.num_envs
        self.command = torch.zeros(n, 3)
        """[vx m/s, vy m/s, yaw rate rad/s] in the base heading frame, (N, 3)."""
        self.is_standing = torch.zeros(n, dtype=torch.bool)
        """Envs told to stand still (zero command), (N,)."""
        self.time_since_resample_s = torch.zeros(n)
        """Time since each env's command last changed [s], (N,)."""

    def resample(self, env_ids: torch.Tensor) -> None:
        """Draw new commands for env_ids."""
        if len(env_ids) == 0:
            return
        rng, n = self.env.rng, len(env_ids)
        low = torch.tensor([r[0] for r in self.ranges])
        high = torch.tensor([r[1] for r in self.ranges])
        command = low + (high - low) * torch.rand(n, 3, generator=rng)
        slow = torch.linalg.vector_norm(command[:, :2], dim=1) < self.min_lin_vel_m_s
        command[slow, :2] = 0.0
        standing = torch.rand(n, generator=rng) < self.standing_fraction
        command[standing] = 0.0
        self.command[env_ids] = command
        self.is_standing[env_ids] = standing
        self.time_since_resample_s[env_ids] = 0.0

    def update(self, dt_s: float) -> None:
        """Advance the clocks; redraw the commands of envs whose period ran out."""
        self.time_since_resample_s += dt_s
        due = (self.time_since_resample_s >= self.resampling_time_s - 1e-6).nonzero().flatten()
        self.resample(due)
