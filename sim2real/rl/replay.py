"""Replay memory of an off-policy learner: n-step transitions of N parallel envs in a ring."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class Transitions:
    """A batch of B transitions (s, a, R, d, s'), the target being R + d * V(s')."""

    obs_policy: torch.Tensor
    """Policy observations of s (B, Dp)."""
    obs_critic: torch.Tensor
    """Critic observations of s (B, Dc)."""
    actions: torch.Tensor
    """Actions taken in s (B, A)."""
    returns: torch.Tensor
    """Discounted reward sum over the n steps, or up to the episode's end (B,)."""
    discounts: torch.Tensor
    """gamma^k of the bootstrap, 0 where the episode terminated within the k steps (B,)."""
    next_policy: torch.Tensor
    """Policy observations of the state bootstrapped from (B, Dp): the last of the episode
    where it ended within the n steps."""
    next_critic: torch.Tensor
    """Critic observations of that state (B, Dc)."""

    def __len__(self) -> int:
        """Number of transitions B."""
        return self.returns.shape[0]


FIELDS = tuple(Transitions.__dataclass_fields__)


class NStepWindow:
    """Turns the one-step transitions of N envs into n-step ones, oldest step first.

    push() takes a step of every env and, once n steps are held, returns the n-step
    transitions that start at the oldest: R = sum_k gamma^k r_k up to the first step that
    ended the episode (included), discount gamma^(k+1) after it (0 if it terminated), and
    the observations after that step. A time-out thus bootstraps from the episode's last
    observations, a terminal state does not bootstrap.
    """

    def __init__(self, n: int, gamma: float) -> None:
        """Window length n >= 1 and discount gamma."""
        if n < 1:
            raise ValueError(f'n-step length must be >= 1, got {n}')
        self.n, self.gamma = n, gamma
        self._steps: list[dict[str, torch.Tensor]] = []

    def clear(self) -> None:
        """Forget the held steps (they are lost, not emitted)."""
        self._steps = []

    def push(self, step: dict[str, torch.Tensor]) -> Transitions | None:
        """Add one step of N envs (obs_policy, obs_critic, actions, rewards, terminated,
        done, next_policy, next_critic); the n-step transitions now complete, or None."""
        self._steps.append(step)
        if len(self._steps) < self.n:
            return None
        first = self._steps[0]
        returns = torch.zeros_like(first['rewards'])
        discounts = torch.ones_like(first['rewards'])
        live = torch.ones_like(first['rewards'], dtype=torch.bool)   # not yet ended
        next_policy = first['next_policy'].clone()
        next_critic = first['next_critic'].clone()
        for step in self._steps:
            # R += gamma^k r_k while the episode lasts; the bootstrap moves one step on
            returns += torch.where(live, discounts * step['rewards'], 0.0)
            discounts = torch.where(live, discounts * self.gamma, discounts)
            next_policy[live] = step['next_policy'][live]
            next_critic[live] = step['next_critic'][live]
            ended_here = live & step['done']
            discounts = torch.where(ended_here & step['terminated'], 0.0, discounts)
            live = live & ~step['done']
        self._steps.pop(0)
        return Transitions(first['obs_policy'], first['obs_critic'], first['actions'],
                           returns, discounts, next_policy, next_critic)


class ReplayBuffer:
    """A ring of the newest `capacity` transitions, sampled uniformly with a generator."""

    def __init__(self, capacity: int, policy_dim: int, critic_dim: int, num_actions: int,
                 device: torch.device | str = 'cpu') -> None:
        """Allocate float32 storage for capacity transitions on device."""
        if capacity < 1:
            raise ValueError(f'replay capacity must be >= 1, got {capacity}')
        widths = {'obs_policy': policy_dim, 'obs_critic': critic_dim, 'actions': num_actions,
                  'returns': 0, 'discounts': 0, 'next_policy': policy_dim,
                  'next_critic': critic_dim}
        self.capacity = capacity
        self._data = {name: torch.zeros((capacity, width) if width else (capacity,),
                                        device=device) for name, width in widths.items()}
        self._head = 0
        self.size = 0
        """Transitions held, at most capacity."""
        self.added = 0
        """Transitions ever added."""

    def add(self, batch: Transitions) -> None:
        """Append a batch, overwriting the oldest transitions once full."""
        count = len(batch)
        if count > self.capacity:
            raise ValueError(f'a batch of {count} transitions exceeds the replay capacity '
                             f'{self.capacity}')
        rows = (self._head + torch.arange(count, device=self._data['returns'].device)) \
            % self.capacity
        for name in FIELDS:
            self._data[name][rows] = getattr(batch, name).detach().to(self._data[name].dtype)
        self._head = (self._head + count) % self.capacity
        self.size = min(self.size + count, self.capacity)
        self.added += count

    def sample(self, batch_size: int, generator: torch.Generator) -> Transitions:
        """batch_size transitions drawn uniformly with replacement."""
        if self.size == 0:
            raise RuntimeError('cannot sample an empty replay buffer')
        rows = torch.randint(self.size, (batch_size,), generator=generator,
                             device=generator.device)
        rows = rows.to(self._data['returns'].device)
        return Transitions(**{name: self._data[name][rows] for name in FIELDS})
