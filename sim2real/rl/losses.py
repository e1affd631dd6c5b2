"""PPO losses and diagnostics (Schulman et al. 2017, Proximal Policy Optimization, 1707.06347).

All functions are pure: they take flat batches (B,) of per-sample quantities (log-probabilities
summed over action dimensions) or (B, A) Gaussian parameters, and return batch means.
"""

from __future__ import annotations

import torch


def surrogate_loss(
    log_prob: torch.Tensor,
    old_log_prob: torch.Tensor,
    advantages: torch.Tensor,
    clip_param: float,
) -> torch.Tensor:
    """Return -L^CLIP, the negated clipped surrogate objective of Schulman et al. 2017, eq. 7."""
    # r_t(theta) = pi_theta(a_t | s_t) / pi_theta_old(a_t | s_t)
    ratio = torch.exp(log_prob - old_log_prob)
    unclipped = ratio * advantages
    clipped = torch.clamp(ratio, 1.0 - clip_param, 1.0 + clip_param) * advantages
    # L^CLIP = E_t[min(r_t A_t, clip(r_t, 1 - eps, 1 + eps) A_t)], minimised as -L^CLIP
    return -torch.min(unclipped, clipped).mean()


def value_loss(
    values: torch.Tensor,
    old_values: torch.Tensor,
    returns: torch.Tensor,
    clip_param: float,
    clipped: bool,
) -> torch.Tensor:
    """Return the critic's squared error to the returns, pessimistically clipped if asked.

    Unclipped: E[(V - R)^2]. Clipped (as in the PPO reference code): the prediction may move at
    most clip_param away from the rollout-time value, and the larger of the two errors is used.
    No factor 1/2: the PPO value_loss_coef absorbs it.
    """
    if not clipped:
        # L^VF = E[(V_theta(s_t) - R_t)^2]
        return (values - returns).pow(2).mean()
    # V_clip = V_old + clip(V_theta - V_old, -eps, eps)
    values_clipped = old_values + torch.clamp(values - old_values, -clip_param, clip_param)
    # L^VF = E[max((V_theta - R_t)^2, (V_clip - R_t)^2)]
    return torch.max((values - returns).pow(2), (values_clipped - returns).pow(2)).mean()


def approx_kl(
    old_mu: torch.Tensor,
    old_sigma: torch.Tensor,
    mu: torch.Tensor,
    sigma: torch.Tensor,
) -> torch.Tensor:
    """Return KL(pi_old || pi_new) between diagonal Gaussians, summed over actions, batch mean.

    Analytic, not sampled: for each action dimension
    KL = log(sigma / sigma_old) + (sigma_old^2 + (mu_old - mu)^2) / (2 sigma^2) - 1/2.
    """
    # KL_i = log(sigma / sigma_old) + (sigma_old^2 + (mu_old - mu)^2) / (2 sigma^2) - 1/2
    per_dim = (
        torch.log(sigma / old_sigma)
        + (old_sigma.pow(2) + (old_mu - mu).pow(2)) / (2.0 * sigma.pow(2))
        - 0.5
    )
    return per_dim.sum(dim=-1).mean()


def clip_fraction(
    log_prob: torch.Tensor,
    old_log_prob: torch.Tensor,
    clip_param: float,
) -> torch.Tensor:
    """Return the fraction of samples whose probability ratio lies outside [1 - eps, 1 + eps]."""
    # r_t = exp(log pi_theta - log pi_theta_old); clipped when |r_t - 1| > eps
    ratio = torch.exp(log_prob - old_log_prob)
    return ((ratio - 1.0).abs() > clip_param).to(log_prob.dtype).mean()


def explained_variance(values: torch.Tensor, returns: torch.Tensor) -> float:
    """Return 1 - Var[R - V] / Var[R] (1: perfect critic, 0: no better than a constant)."""
    # population variances over the whole batch; undefined (nan) when the returns are constant
    var_returns = torch.var(returns, unbiased=False)
    if var_returns.item() == 0.0:
        return float('nan')
    # EV = 1 - Var[R - V] / Var[R]
    return float(1.0 - torch.var(returns - values, unbiased=False) / var_returns)
