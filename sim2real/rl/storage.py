"""Fixed-size on-policy rollout buffer for T steps of N parallel environments."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import torch

from sim2real.rl.gae import compute_gae


@dataclass
class Transition:
    """One step of N environments, as recorded by the algorithm."""

    obs_policy: torch.Tensor
    """Policy observations before the step (N, policy_obs_dim)."""
    obs_critic: torch.Tensor
    """Critic observations before the step (N, critic_obs_dim)."""
    actions: torch.Tensor
    """Sampled actions (N, A), unclipped."""
    values: torch.Tensor
    """Critic values V(s_t) (N,)."""
    log_probs: torch.Tensor
    """Log-probabilities of the actions under the rollout policy (N,)."""
    action_means: torch.Tensor
    """Mean of the rollout policy (N, A)."""
    action_stds: torch.Tensor
    """Standard deviation of the rollout policy (N, A)."""
    rewards: torch.Tensor
    """Rewards (N,), already including any time-out bootstrap."""
    dones: torch.Tensor
    """1.0 where the episode ended after this step (N,)."""


@dataclass
class Minibatch:
    """A flat, shuffled slice of the rollout used for one gradient step."""

    obs_policy: torch.Tensor
    """Policy observations (B, policy_obs_dim)."""
    obs_critic: torch.Tensor
    """Critic observations (B, critic_obs_dim)."""
    actions: torch.Tensor
    """Actions (B, A)."""
    old_values: torch.Tensor
    """Rollout-time values (B,)."""
    old_log_probs: torch.Tensor
    """Rollout-time log-probabilities (B,)."""
    old_means: torch.Tensor
    """Rollout-time policy means (B, A)."""
    old_stds: torch.Tensor
    """Rollout-time policy standard deviations (B, A)."""
    advantages: torch.Tensor
    """Advantage estimates (B,)."""
    returns: torch.Tensor
    """Value targets (B,)."""


_STEP_FIELDS = ('obs_policy', 'obs_critic', 'actions', 'values', 'log_probs', 'action_means',
                'action_stds', 'rewards', 'dones')


class RolloutStorage:
    """Holds T x N transitions, computes GAE over them and serves shuffled minibatches."""

    def __init__(
        self, num_steps: int, num_envs: int, policy_obs_dim: int, critic_obs_dim: int,
        num_actions: int,
    ) -> None:
        """Allocate zeroed float32 buffers shaped (T, N, ...)."""
        self.num_steps = num_steps
        self.num_envs = num_envs
        shapes = {
            'obs_policy': (policy_obs_dim,), 'obs_critic': (critic_obs_dim,),
            'actions': (num_actions,), 'action_means': (num_actions,),
            'action_stds': (num_actions,),
        }
        for name in _STEP_FIELDS:
            setattr(self, name, torch.zeros(num_steps, num_envs, *shapes.get(name, ())))
        self.advantages = torch.zeros(num_steps, num_envs)
        self.returns = torch.zeros(num_steps, num_envs)
        self.step = 0

    @property
    def full(self) -> bool:
        """True once all T steps have been recorded."""
        return self.step == self.num_steps

    def add(self, transition: Transition) -> None:
        """Record one step of all environments."""
        if self.full:
            raise RuntimeError(f'rollout storage is full ({self.num_steps} steps); clear() it')
        for name in _STEP_FIELDS:
            getattr(self, name)[self.step].copy_(getattr(transition, name).detach())
        self.step += 1

    def clear(self) -> None:
        """Start a new rollout (buffers are overwritten, not zeroed)."""
        self.step = 0

    def compute_returns(self, last_values: torch.Tensor, gamma: float, lam: float) -> None:
        """Fill advantages and returns by GAE, bootstrapping from last_values = V(s_T) (N,)."""
        if not self.full:
            raise RuntimeError(f'rollout has {self.step} of {self.num_steps} steps')
        self.advantages, self.returns = compute_gae(
            self.rewards, self.values, self.dones, last_values.detach(), gamma, lam
        )

    def minibatches(
        self, num_mini_batches: int, num_epochs: int, generator: torch.Generator
    ) -> Iterator[Minibatch]:
        """Yield num_epochs passes of num_mini_batches shuffled minibatches over the T*N samples.

        Samples that do not fill a whole minibatch (batch size not divisible) are left out of
        that epoch; the permutation is drawn from generator, so shuffling is reproducible.
        """
        batch_size = self.num_steps * self.num_envs
        mb_size = batch_size // num_mini_batches
        if mb_size == 0:
            raise ValueError(f'{num_mini_batches} minibatches for only {batch_size} samples')
        flat = {
            'obs_policy': self.obs_policy, 'obs_critic': self.obs_critic,
            'actions': self.actions, 'old_values': self.values, 'old_log_probs': self.log_probs,
            'old_means': self.action_means, 'old_stds': self.action_stds,
            'advantages': self.advantages, 'returns': self.returns,
        }
        scalar = {k for k, v in flat.items() if v.dim() == 2}   # (T, N): one value per sample
        flat = {k: v.reshape(batch_size, -1) for k, v in flat.items()}
        # one (T*N, columns) table, so a minibatch is one row gather instead of nine
        widths = [v.shape[1] for v in flat.values()]
        table = torch.cat(list(flat.values()), dim=1)
        for _ in range(num_epochs):
            perm = torch.randperm(batch_size, generator=generator)
            for i in range(num_mini_batches):
                rows = table[perm[i * mb_size:(i + 1) * mb_size]]
                parts = dict(zip(flat, rows.split(widths, dim=1)))
                yield Minibatch(**{k: v[:, 0] if k in scalar else v for k, v in parts.items()})
