"""The batched-environment protocol the on-policy runner trains on."""

from __future__ import annotations

from typing import Any, Protocol

import torch


class VecEnv(Protocol):
    """N environments stepped together; all tensors on CPU, first dimension N.

    Finished environments reset themselves inside step(): the observations returned for them
    already belong to the next episode. extras['log'] (optional) maps names such as
    'episode/return' or 'episode/success' to floats averaged over the episodes that ended this
    step; it is absent or empty when none ended.
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
