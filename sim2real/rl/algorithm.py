"""The interface every learning algorithm offers the collector, the runner and the exporter.

The collector (sim2real.rl.collector) owns the rollout loop and calls, per env step, `act`
then `process_step`, and `end_rollout` after `rollout_steps` of them; the runner then calls
`update`. Checkpoints hold `state_dict()` beside the runner's own counters; export and
evaluation use `inference_policy()`: a module mapping policy observations (B, D) to the
deterministic actions (B, A) the deployed policy takes, its normalizer inside.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

import torch
from torch import nn


class Algorithm(Protocol):
    """A learner that acts in a batched env, learns from what it saw and exports its policy."""

    name: ClassVar[str]
    """Registered name ('ppo', 'sac'), as `train --algo` takes it."""
    state_keys: ClassVar[tuple[str, ...]]
    """Keys state_dict() always returns (a checkpoint without them is not this algorithm's)."""
    log_keys: ClassVar[tuple[str, ...]]
    """update() metrics worth a place on the one-line progress log."""
    rollout_steps: int
    """Env steps per env that the collector gathers between updates (T)."""
    final_observations: bool
    """Whether process_step needs the last observations of episodes that ended (extras
    'final_obs_groups'): a time-out's value is bootstrapped from them."""

    @property
    def network(self) -> nn.Module:
        """Every parameter and observation normalizer: the checkpoint's 'model'."""
        ...

    def act(self, obs: dict[str, torch.Tensor]) -> torch.Tensor:
        """Exploration actions (N, A) for the observation groups of N envs."""
        ...

    def process_step(self, obs: dict[str, torch.Tensor], rewards: torch.Tensor,
                     terminated: torch.Tensor, truncated: torch.Tensor,
                     extras: dict[str, Any]) -> None:
        """Record the outcome of the last act(): the next observations (of the new episode
        where one ended), rewards (N,), terminal and time-out flags (N,) and the env's
        extras."""
        ...

    def episodes_restarted(self) -> None:
        """The env was reset: forget anything that links steps across the reset."""
        ...

    def end_rollout(self, obs: dict[str, torch.Tensor]) -> None:
        """Close a rollout of rollout_steps steps; obs are the env's current observations."""
        ...

    def update(self) -> dict[str, float]:
        """Learn from what was recorded; return scalar diagnostics."""
        ...

    def state_dict(self) -> dict:
        """Everything needed to continue learning, as weights_only-loadable data."""
        ...

    def load_state_dict(self, state: dict) -> None:
        """Restore what state_dict() returned."""
        ...

    def inference_policy(self) -> nn.Module:
        """The deterministic deployment policy: an eval-mode copy, observations in, actions
        out, observation normalization inside."""
        ...
