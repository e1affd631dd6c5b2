"""Quadruped task metrics: velocity tracking errors over each episode, falls, and success.

Definitions (what ``sim2real eval --json`` reports, averaged over episodes):

- ``lin_vel_error_mps``: per episode, the mean over policy steps of |cmd_xy - v_xy| [m/s],
  the norm of the planar error, with v the base velocity in the heading frame (world
  velocity turned by the base yaw, so it is horizontal whatever the pitch and roll).
- ``yaw_rate_error_radps``: per episode, the mean of |cmd_yaw_rate - w_z| [rad/s], w_z the
  base angular velocity about world z.
- ``fall_rate``: share of episodes that terminated (base contact, tilt, or too low) before
  the time-out.

Steps within ``settle_s`` of a command change (episode start included) are not counted:
they measure the response to the step, not the tracking. Success: the episode ran to its
time-out and its lin_vel_error_mps <= tolerance_mps.
"""

from __future__ import annotations

import torch

from sim2real.device import to_floats
from sim2real.sim.state import Stateful
from sim2real.tasks.quadruped.mdp import COMMAND, lin_vel_heading


class VelocityMetrics(Stateful):
    """Accumulates tracking errors over each episode and judges success."""

    STATE = ('_lin_sum', '_yaw_sum', '_count', 'last_success', 'last_values', 'finished')
    NOT_STATE = ('env',)

    quantiles: dict[str, float] = {}
    """No percentiles: evaluation reports the means."""

    def __init__(self, env, tolerance_mps: float = 0.1, settle_s: float = 1.0,
                 command: str = COMMAND):
        """Success tolerance [m/s]; time after a command change that is not judged [s]."""
        self.env = env
        self.tolerance_mps = tolerance_mps
        self.settle_s = settle_s
        self.command = command
        n = env.num_envs
        self._lin_sum = torch.zeros(n)
        self._yaw_sum = torch.zeros(n)
        self._count = torch.zeros(n)
        self.last_success = torch.zeros(n, dtype=torch.bool)
        """Success of each env's most recent finished episode."""
        self.last_values = {name: torch.full((n,), torch.nan) for name in (
            'lin_vel_error_mps', 'yaw_rate_error_radps', 'fall_rate')}
        """Per-env values of the most recent finished episode (NaN: not measured)."""
        self.finished = torch.zeros(n, dtype=torch.long)
        """Number of finished episodes per env."""

    def reset(self, env_ids: torch.Tensor) -> None:
        """Clear the accumulators of env_ids."""
        self._lin_sum[env_ids] = 0.0
        self._yaw_sum[env_ids] = 0.0
        self._count[env_ids] = 0.0

    def update(self) -> None:
        """Add this step's errors of the envs past their settling time."""
        env = self.env
        command = env.command(self.command)
        counted = (command.time_since_resample_s >= self.settle_s).float()
        lin = torch.linalg.vector_norm(command.command[:, :2] - lin_vel_heading(env), dim=1)
        # world z component of the body-frame rate: (R_wb w_b)_z = R_wb[2, :] . w_b
        yaw_rate = (env.scene.rotmat_wb[:, 2, :] * env.scene.ang_vel_b).sum(dim=1)
        self._lin_sum += counted * lin
        self._yaw_sum += counted * (command.command[:, 2] - yaw_rate).abs()
        self._count += counted

    def finish(self, env_ids: torch.Tensor, terminated: torch.Tensor) -> dict[str, float]:
        """Judge the finished episodes of env_ids; returns their mean metrics for logging."""
        count = self._count[env_ids]
        measured = count > 0
        lin = torch.where(measured, self._lin_sum[env_ids] / count.clamp(min=1), torch.nan)
        yaw = torch.where(measured, self._yaw_sum[env_ids] / count.clamp(min=1), torch.nan)
        success = ~terminated & measured & (lin <= self.tolerance_mps)
        self.last_success[env_ids] = success
        self.last_values['lin_vel_error_mps'][env_ids] = lin
        self.last_values['yaw_rate_error_radps'][env_ids] = yaw
        self.last_values['fall_rate'][env_ids] = terminated.float()
        self.finished[env_ids] += 1
        log = {'episode/success': success.float().mean(),
               'episode/fall_rate': terminated.float().mean()}
        if bool(measured.any()):
            log['episode/lin_vel_error_mps'] = lin[measured].mean()
            log['episode/yaw_rate_error_radps'] = yaw[measured].mean()
        ground = self.env.scene.ground
        if ground.curriculum is not None:
            log['curriculum/terrain_level'] = ground.mean_level()
        return to_floats(log)
