"""What a task's metrics term offers: per-env outcomes of each env's last finished episode.

`RLEnv` drives it (update every step, finish and reset per episode); `evaluate` and
`robustness` read it through this interface alone, whatever the task.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import torch


@runtime_checkable
class EpisodeMetrics(Protocol):
    """A task's episode metrics."""

    finished: torch.Tensor
    """Finished episodes per env, (N,) long."""
    last_success: torch.Tensor
    """Success of each env's most recent finished episode, (N,) bool."""
    quantiles: dict[str, float]
    """Metric name -> quantile that evaluation reports beside its mean (e.g. 0.95)."""

    @property
    def last_values(self) -> dict[str, torch.Tensor]:
        """Metric name (with its unit) -> per-env value of the last finished episode, (N,);
        NaN where that episode did not measure it."""

    def update(self) -> None:
        """Accumulate after a step."""

    def finish(self, env_ids: torch.Tensor, terminated: torch.Tensor) -> dict[str, float]:
        """Judge the finished episodes of env_ids; their mean metrics for logging."""

    def reset(self, env_ids: torch.Tensor) -> None:
        """Clear the accumulators of env_ids."""


def quantile_name(name: str, q: float) -> str:
    """'position_error_m', 0.95 -> 'position_error_p95_m' (the unit stays last)."""
    stem, _, unit = name.rpartition('_')
    return f'{stem}_p{round(q * 100)}_{unit}' if stem else f'{name}_p{round(q * 100)}'
