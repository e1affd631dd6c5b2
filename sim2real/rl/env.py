"""The batched-environment protocol the on-policy runner trains on."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import torch


class VecEnv(Protocol):
    """N environments stepped together; all tensors on CPU, first dimension N.

    Finished environments reset themselves inside step(): the observations returned for them
    already belong to the next episode. extras['log'] (optional) maps names such as
    'episode/return' or 'episode/success' to floats averaged over the episodes that ended this
    step; it is absent or empty when none ended.

    Optionally, the state protocol: state_dict() (the env's full state as plain data),
    load_state_dict(state) and get_observations() (those of the last reset or step). With
    it the runner's checkpoints hold the env's state and a resumed run continues the
    episodes in flight exactly (sim2real.mdp.env.RLEnv has it); without it a resumed env is
    reset with seed + iteration.
    """

    num_envs: int
    """Number of parallel environments N."""
    num_actions: int
    """Action dimension A."""
    obs_dims: dict[str, int]
    """Observation sizes of the 'policy' (actor) and 'critic' (privileged) groups."""

    def reset(self, seed: int | None = None) -> dict[str, torch.Tensor]:
        """Reset all environments (seeding their randomness if seed is given); return obs."""
        ...

    def step(self, actions: torch.Tensor) -> tuple[
        dict[str, torch.Tensor], torch.Tensor, torch.Tensor, torch.Tensor, dict[str, Any]
    ]:
        """Apply raw actions (N, A); return (obs, rewards, terminated, truncated, extras)."""
        ...


@dataclass
class EnvSpec:
    """The sizes of a batched env that steps elsewhere (in rollout workers)."""

    num_envs: int
    """Parallel environments N, over all workers."""
    num_actions: int
    """Action dimension A."""
    obs_dims: dict[str, int]
    """Observation sizes of the 'policy' and 'critic' groups."""
    device: torch.device = field(default_factory=lambda: torch.device('cpu'))
    """Where the learner's tensors live."""
