"""Observation term history: a term's values over its last ticks, stacked newest first.

A term with ``history_length`` H > 1 contributes [v_t, v_t-1, ..., v_t-H+1] to its group's
vector (each of the term's size): the values as they were delivered to the policy at those
ticks (scaled, noisy, clipped, delayed or held by a dropout). An env reset since the last
tick sees its first value repeated, so the vector never mixes two episodes. The deploy
runtime stacks its own built values with the same functions (``sim2real.terms``),
restarting at enable.
"""

from __future__ import annotations

import torch

from sim2real import terms
from sim2real.sim.state import Stateful


class TermHistory(Stateful):
    """Past delivered vectors of one observation group, for the terms that stack history."""

    STATE = ('past', 'fresh')
    NOT_STATE = ('_ticks', '_cols')

    def __init__(self, sizes: list[int], lengths: list[int], num_envs: int):
        """Term sizes (one tick) and history lengths, in group order."""
        if min(lengths) < 1:
            raise ValueError(f'history lengths must be >= 1, got {lengths}')
        ticks, cols = terms.history_index(sizes, lengths)
        self._ticks = torch.tensor(ticks, dtype=torch.long)
        self._cols = torch.tensor(cols, dtype=torch.long)
        self.past = torch.zeros(num_envs, max(lengths) - 1, sum(sizes))
        """Delivered vectors of the previous ticks, newest first, (N, H - 1, D)."""
        self.fresh = torch.ones(num_envs, dtype=torch.bool)
        """Envs reset since the last tick: their history is their current value."""

    def reset(self, env_ids: torch.Tensor) -> None:
        """Start the history of env_ids afresh at their next tick."""
        self.fresh[env_ids] = True

    def stack(self, values: torch.Tensor) -> torch.Tensor:
        """This tick's vector (N, D) with each term's history, (N, D_stacked); no state
        change."""
        past = self.past
        if bool(self.fresh.any()):
            past = torch.where(self.fresh[:, None, None], values[:, None, :], past)
        return terms.stack_history(values, past, self._ticks, self._cols)

    def advance(self, values: torch.Tensor) -> torch.Tensor:
        """stack(values), then record values as the newest past tick."""
        out = self.stack(values)
        if bool(self.fresh.any()):
            self.past[self.fresh] = values[self.fresh][:, None, :]
            self.fresh.zero_()
        self.past = terms.push_history(values, self.past)
        return out
