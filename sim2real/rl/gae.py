"""Generalized Advantage Estimation (Schulman et al. 2016, arXiv:1506.02438)."""

from __future__ import annotations

import torch


def compute_gae(
    rewards: torch.Tensor,
    values: torch.Tensor,
    dones: torch.Tensor,
    last_values: torch.Tensor,
    gamma: float,
    lam: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Return (advantages, returns) by GAE(gamma, lambda), Schulman et al. 2016, eq. 16.

    rewards, values and dones are shaped (T, N) for T steps of N environments; last_values (N,)
    is V(s_T), the value of the observation after the last stored step. dones[t] (bool or
    float) is 1 where the episode ended after step t: nothing is bootstrapped across it.

    Time-outs (truncation) are the caller's job: an episode cut by a time limit did not really
    end, so the caller adds gamma * V(s) to that step's reward before calling this function,
    and still marks the step as done (the next stored observation belongs to a new episode).
    The returns are the lambda-returns advantages + values (the critic's regression target).
    """
    if rewards.shape != values.shape or rewards.shape != dones.shape:
        raise ValueError(
            f'rewards {tuple(rewards.shape)}, values {tuple(values.shape)} and dones '
            f'{tuple(dones.shape)} must share one (T, N) shape'
        )
    if last_values.shape != rewards.shape[1:]:
        raise ValueError(
            f'last_values {tuple(last_values.shape)} must be shaped (N,) = '
            f'{tuple(rewards.shape[1:])}'
        )
    not_done = 1.0 - dones.to(values.dtype)
    advantages = torch.zeros_like(values)
    next_advantage = torch.zeros_like(last_values)
    next_values = last_values
    for t in reversed(range(rewards.shape[0])):
        # delta_t = r_t + gamma * (1 - d_t) * V(s_{t+1}) - V(s_t)
        delta = rewards[t] + gamma * not_done[t] * next_values - values[t]
        # A_t = delta_t + gamma * lam * (1 - d_t) * A_{t+1}
        next_advantage = delta + gamma * lam * not_done[t] * next_advantage
        advantages[t] = next_advantage
        next_values = values[t]
    # R_t = A_t + V(s_t)
    returns = advantages + values
    return advantages, returns
