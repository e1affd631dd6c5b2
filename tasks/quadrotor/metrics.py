"""Quadrotor task metrics: position error over the final window and success.

Success (documented in the task configs): the episode ran to its time-out without a crash
and the position error statistic over its last window_s seconds is within tolerance_m
(hover: the MAX error over the last 2 s <= 0.1 m; track: the MEAN error over the last 3 s
<= 0.15 m).
"""

from __future__ import annotations

import torch

from sim2real.device import to_floats
from sim2real.sim.state import Stateful
from sim2real.tasks.quadrotor.mdp import position_error_l2


class PositionMetrics(Stateful):
    """Accumulates the error over each episode's final window and judges success."""

    STATE = ('_sum', '_max', '_count', 'last_success', 'last_error_m', 'finished')
    NOT_STATE = ('env',)

    quantiles = {'position_error_m': 0.95}
    """Evaluation reports the 95th percentile of the window error beside its mean."""

    def __init__(self, env, window_s: float, tolerance_m: float, statistic: str = 'max',
                 command: str = 'target'):
        """statistic: 'max' or 'mean' of the error over the window."""
        if statistic not in ('max', 'mean'):
            raise ValueError(f'statistic must be "max" or "mean", got "{statistic}"')
        self.env = env
        self.window_steps = round(window_s / env.step_dt_s)
        self.tolerance_m = tolerance_m
        self.statistic = statistic
        self.command = command
        n = env.num_envs
        self._sum = torch.zeros(n)
        self._max = torch.zeros(n)
        self._count = torch.zeros(n)
        self.last_success = torch.zeros(n, dtype=torch.bool)
        """Success of each env's most recent finished episode."""
        self.last_error_m = torch.zeros(n)
        """Mean window error of each env's most recent finished episode [m]."""
        self.finished = torch.zeros(n, dtype=torch.long)
        """Number of finished episodes per env."""

    @property
    def last_values(self) -> dict[str, torch.Tensor]:
        """Mean window error of each env's last finished episode [m] (NaN: cut short)."""
        return {'position_error_m': self.last_error_m}

    def reset(self, env_ids: torch.Tensor) -> None:
        """Clear the accumulators of env_ids."""
        self._sum[env_ids] = 0.0
        self._max[env_ids] = 0.0
        self._count[env_ids] = 0.0

    def update(self) -> None:
        """Accumulate the error of envs inside their final window."""
        env = self.env
        in_window = env.episode_length > env.max_episode_length - self.window_steps
        err = position_error_l2(env, self.command)
        self._sum += torch.where(in_window, err, 0.0)
        self._max = torch.where(in_window, torch.maximum(self._max, err), self._max)
        self._count += in_window.float()

    def finish(self, env_ids: torch.Tensor, terminated: torch.Tensor) -> dict[str, float]:
        """Judge the finished episodes of env_ids; returns their mean metrics."""
        count = self._count[env_ids]
        full = (count >= self.window_steps) & ~terminated
        mean_err = self._sum[env_ids] / count.clamp(min=1)
        stat = self._max[env_ids] if self.statistic == 'max' else mean_err
        success = full & (stat <= self.tolerance_m)
        self.last_success[env_ids] = success
        self.last_error_m[env_ids] = torch.where(full, mean_err, torch.nan)
        self.finished[env_ids] += 1
        log = {'episode/success': success.float().mean()}
        if bool(full.any()):
            log['episode/position_error_m'] = mean_err[full].mean()
        return to_floats(log)
