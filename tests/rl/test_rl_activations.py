"""ExpELU: the actor-critic's ELU through exp, against torch's ELU."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from sim2real.rl.activations import ExpELU
from sim2real.rl.networks import ActorCritic, ExportablePolicy, PolicyCfg


def _inputs() -> torch.Tensor:
    """Float32 samples across ELU's range: large negatives, the kink at 0, large positives."""
    x = torch.cat([torch.linspace(-30.0, 30.0, 20001), torch.tensor([0.0, -0.0, 1e-8, -1e-8]),
                   torch.randn(10000, generator=torch.Generator().manual_seed(0))])
    return x.requires_grad_(True)


def test_forward_matches_elu_within_one_rounding_of_one():
    """Positive inputs pass through exactly; elsewhere exp(x) - 1 is within 6e-8 of expm1(x)."""
    x = _inputs()
    ours, ref = ExpELU()(x), F.elu(x)
    positive = x > 0
    assert torch.equal(ours[positive], x[positive])
    assert (ours - ref).abs().max().item() <= 2 ** -24 + 1e-12
    assert ours.min().item() == -1.0   # exp(-30) - 1 rounds to -1 in float32


def test_gradient_matches_elu():
    """d ELU / dx: 1 for x > 0, exp(x) elsewhere, within float32 rounding of torch's."""
    x = _inputs()
    grad_out = torch.rand(x.shape, generator=torch.Generator().manual_seed(1))
    (ours,) = torch.autograd.grad(ExpELU()(x), x, grad_out)
    (ref,) = torch.autograd.grad(F.elu(x), x, grad_out)
    assert (ours - ref).abs().max().item() < 1.2e-7
    assert torch.equal(ours[x > 0], grad_out[x > 0])


def test_float64_gradient_is_exact_by_finite_differences():
    """torch.autograd.gradcheck of the analytic backward away from the kink at 0."""
    x = torch.tensor([-3.0, -0.5, -1e-3, 1e-3, 0.7, 4.0], dtype=torch.float64,
                     requires_grad=True)
    assert torch.autograd.gradcheck(ExpELU(), (x,))


def test_exported_policy_uses_the_standard_elu_and_matches_the_actor():
    """The deployment copy swaps in nn.ELU (the ONNX Elu operator); its actions stay within
    1e-6 of the training actor's."""
    ac = ActorCritic(8, 10, 3, PolicyCfg(actor_hidden_dims=(64, 64)))
    policy = ExportablePolicy(ac)
    kinds = {type(m) for m in policy.actor}
    assert nn.ELU in kinds and ExpELU not in kinds
    assert any(isinstance(m, ExpELU) for m in ac.actor)
    obs = torch.randn(256, 8, generator=torch.Generator().manual_seed(2)) * 3.0
    with torch.no_grad():
        assert (policy(obs) - ac.act_inference(obs)).abs().max().item() < 1e-6
