"""Tests of the PPO losses and diagnostics against hand-computed numbers."""

import math

import torch

from sim2real.rl import approx_kl, clip_fraction, explained_variance, surrogate_loss, value_loss


def test_surrogate_loss_without_clipping():
    """Ratios inside [1 - eps, 1 + eps]: the loss is -mean(r * A)."""
    # r = [1.1, 0.9], A = [1, -2]: min(1.1, 1.1) = 1.1, min(-1.8, -1.8) = -1.8
    # L^CLIP = (1.1 - 1.8) / 2 = -0.35, loss = 0.35
    log_prob = torch.log(torch.tensor([1.1, 0.9]))
    loss = surrogate_loss(log_prob, torch.zeros(2), torch.tensor([1.0, -2.0]), 0.2)
    torch.testing.assert_close(loss, torch.tensor(0.35))


def test_surrogate_loss_with_clipping_is_pessimistic_and_stops_gradient():
    """Clipping applies only where it lowers the objective, and zeroes the clipped gradient."""
    # eps = 0.2; r = [1.5, 0.5, 0.5], A = [2, -1, 1]
    # sample 0: min(1.5 * 2, 1.2 * 2) = 2.4 (clipped)
    # sample 1: min(0.5 * -1, 0.8 * -1) = -0.8 (clipped)
    # sample 2: min(0.5 * 1, 0.8 * 1) = 0.5 (unclipped: clipping would be optimistic)
    # L^CLIP = (2.4 - 0.8 + 0.5) / 3 = 0.7, loss = -0.7
    log_prob = torch.log(torch.tensor([1.5, 0.5, 0.5])).requires_grad_()
    loss = surrogate_loss(log_prob, torch.zeros(3), torch.tensor([2.0, -1.0, 1.0]), 0.2)
    torch.testing.assert_close(loss, torch.tensor(-0.7))
    loss.backward()
    # d loss / d log_prob_2 = -(r_2 * A_2) / 3 = -0.5 / 3; clipped samples get no gradient
    torch.testing.assert_close(log_prob.grad, torch.tensor([0.0, 0.0, -0.5 / 3.0]))


def test_value_loss_unclipped_and_clipped():
    """Unclipped is the MSE; clipped takes the larger error of V and V_old + clip(V - V_old)."""
    values = torch.tensor([1.0, 3.0])
    old_values = torch.tensor([0.0, 2.9])
    returns = torch.tensor([2.0, 2.0])
    # unclipped: ((1 - 2)^2 + (3 - 2)^2) / 2 = 1.0
    unclipped = value_loss(values, old_values, returns, 0.2, clipped=False)
    torch.testing.assert_close(unclipped, torch.tensor(1.0))
    # V_clip = [0 + 0.2, 2.9 + 0.1] = [0.2, 3.0]: errors^2 [3.24, 1.0] vs [1.0, 1.0]
    # max: [3.24, 1.0], mean = 2.12
    clipped = value_loss(values, old_values, returns, 0.2, clipped=True)
    torch.testing.assert_close(clipped, torch.tensor(2.12))


def test_approx_kl_matches_hand_value_and_torch():
    """The analytic Gaussian KL is summed over actions, averaged over the batch."""
    # sample 0, dim 0: N(0, 1) -> N(1, 2): log 2 + (1 + 1) / (2 * 4) - 0.5 = log 2 - 0.25
    # sample 0, dim 1 and sample 1: unchanged, KL = 0; batch mean = (log 2 - 0.25) / 2
    old_mu = torch.zeros(2, 2)
    old_sigma = torch.ones(2, 2)
    mu = torch.tensor([[1.0, 0.0], [0.0, 0.0]])
    sigma = torch.tensor([[2.0, 1.0], [1.0, 1.0]])
    kl = approx_kl(old_mu, old_sigma, mu, sigma)
    torch.testing.assert_close(kl, torch.tensor((math.log(2.0) - 0.25) / 2.0))
    reference = torch.distributions.kl_divergence(
        torch.distributions.Normal(old_mu, old_sigma), torch.distributions.Normal(mu, sigma)
    ).sum(-1).mean()
    torch.testing.assert_close(kl, reference)


def test_clip_fraction_counts_ratios_outside_the_band():
    """Ratios [1.1, 1.3, 0.7, 0.85] with eps 0.2: two of four are outside [0.8, 1.2]."""
    log_prob = torch.log(torch.tensor([1.1, 1.3, 0.7, 0.85]))
    torch.testing.assert_close(clip_fraction(log_prob, torch.zeros(4), 0.2), torch.tensor(0.5))


def test_explained_variance_hand_values():
    """EV is 1 for a perfect critic, 0 for the mean, 0.85 for one error, nan for constant R."""
    returns = torch.tensor([1.0, 2.0, 3.0, 4.0])
    assert explained_variance(returns, returns) == 1.0
    assert abs(explained_variance(torch.full((4,), 2.5), returns)) < 1e-7
    # R - V = [0, 0, 0, -1]: Var = 0.25 - 0.0625 = 0.1875; Var[R] = 1.25; EV = 1 - 0.15
    ev = explained_variance(torch.tensor([1.0, 2.0, 3.0, 5.0]), returns)
    assert abs(ev - 0.85) < 1e-6
    assert math.isnan(explained_variance(returns, torch.ones(4)))
