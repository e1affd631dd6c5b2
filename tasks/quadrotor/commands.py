"""Quadrotor commands: a fixed target per episode (hover) or a smooth random trajectory."""

from __future__ import annotations

import math

import torch

from sim2real.sim.state import Stateful


def _uniform(lo, hi, shape, rng) -> torch.Tensor:
    """Samples of U(lo, hi) with per-column bounds (sequences of length shape[-1])."""
    lo = torch.as_tensor(lo, dtype=torch.float32)
    hi = torch.as_tensor(hi, dtype=torch.float32)
    return lo + (hi - lo) * torch.rand(shape, generator=rng)


class HoverTarget(Stateful):
    """A target position drawn at reset, held for the episode."""

    STATE = ('pos_w', 'vel_w')
    NOT_STATE = ('env',)

    def __init__(self, env, pos_range_w: tuple = ((-1.0, -1.0, 1.0), (1.0, 1.0, 2.0))):
        """pos_range_w: (low xyz, high xyz) of the target box [m; world frame]."""
        self.env = env
        self.pos_range_w = pos_range_w
        self.pos_w = torch.zeros(env.num_envs, 3)
        """Reference position [m; world frame], (N, 3)."""
        self.vel_w = torch.zeros(env.num_envs, 3)
        """Reference velocity [m/s; world frame], (N, 3)."""

    def resample(self, env_ids: torch.Tensor) -> None:
        """Draw new targets for env_ids."""
        lo, hi = self.pos_range_w
        self.pos_w[env_ids] = _uniform(lo, hi, (len(env_ids), 3), self.env.rng)

    def update(self, dt_s: float) -> None:
        """A hover target does not move."""

    def marker_pos_w(self) -> torch.Tensor:
        """Where a rollout video draws the reference [m; world], (N, 3)."""
        return self.pos_w


class SmoothTrajectory(HoverTarget):
    """Sum of sinusoids per axis around a random centre: p(t) = c + sum A sin(2 pi f t + phi)."""

    STATE = HoverTarget.STATE + ('centre_w', '_amp', '_omega', '_phase')

    def __init__(self, env, pos_range_w: tuple = ((-0.5, -0.5, 1.2), (0.5, 0.5, 1.8)),
                 num_harmonics: int = 2, amplitude_m: tuple[float, float] = (0.0, 0.4),
                 frequency_hz: tuple[float, float] = (0.05, 0.3)):
        """Centre box, harmonics per axis, amplitude range [m], frequency range [Hz]."""
        super().__init__(env, pos_range_w)
        self.amplitude_m = amplitude_m
        self.frequency_hz = frequency_hz
        n = env.num_envs
        self.centre_w = torch.zeros(n, 3)
        self._amp = torch.zeros(n, 3, num_harmonics)
        self._omega = torch.zeros(n, 3, num_harmonics)
        self._phase = torch.zeros(n, 3, num_harmonics)

    def resample(self, env_ids: torch.Tensor) -> None:
        """Draw a new trajectory for env_ids and set the reference to its start."""
        rng, k = self.env.rng, self._amp.shape[2]
        shape = (len(env_ids), 3, k)
        lo, hi = self.pos_range_w
        self.centre_w[env_ids] = _uniform(lo, hi, (len(env_ids), 3), rng)
        self._amp[env_ids] = _uniform(*self.amplitude_m, shape, rng) / k
        self._omega[env_ids] = 2 * math.pi * _uniform(*self.frequency_hz, shape, rng)
        self._phase[env_ids] = _uniform(0.0, 2 * math.pi, shape, rng)
        # t = 0: the env resets its episode time only after its commands are resampled
        self._evaluate(env_ids, torch.zeros(len(env_ids)))

    def update(self, dt_s: float) -> None:
        """Move the reference to the current episode time."""
        self._evaluate(torch.arange(self.env.num_envs), self.env.episode_time_s.float())

    def _evaluate(self, env_ids: torch.Tensor, time_s: torch.Tensor) -> None:
        """Reference position and velocity of env_ids at times time_s [s], (len(env_ids),)."""
        t = time_s[:, None, None]
        arg = self._omega[env_ids] * t + self._phase[env_ids]
        self.pos_w[env_ids] = self.centre_w[env_ids] + (self._amp[env_ids] * arg.sin()).sum(-1)
        self.vel_w[env_ids] = (self._amp[env_ids] * self._omega[env_ids] * arg.cos()).sum(-1)
