"""Tests of the asymmetric ActorCritic and the ONNX export of ExportablePolicy."""

import math

import numpy as np
import pytest
import torch

from sim2real.rl import ActorCritic, ExportablePolicy, PolicyCfg

POLICY_OBS, CRITIC_OBS, ACTIONS = 5, 9, 3


@pytest.fixture
def actor_critic():
    """A small actor-critic whose normalizers have seen shifted, scaled observations."""
    torch.manual_seed(0)
    ac = ActorCritic(POLICY_OBS, CRITIC_OBS, ACTIONS, PolicyCfg(init_noise_std=0.5))
    ac.update_normalizers(torch.randn(256, POLICY_OBS) * 3.0 + 2.0,
                          torch.randn(256, CRITIC_OBS) - 1.0)
    return ac


def test_shapes_of_asymmetric_actor_critic(actor_critic):
    """Actor reads policy obs, critic reads the larger critic obs; outputs are (N, A) and (N,)."""
    obs_policy, obs_critic = torch.randn(8, POLICY_OBS), torch.randn(8, CRITIC_OBS)
    actions, log_prob = actor_critic.act(obs_policy)
    assert actions.shape == (8, ACTIONS) and log_prob.shape == (8,)
    assert actor_critic.value(obs_critic).shape == (8,)
    assert actor_critic.act_inference(obs_policy).shape == (8, ACTIONS)
    with pytest.raises(RuntimeError):
        actor_critic.value(obs_policy)


def test_distribution_uses_learned_state_independent_std(actor_critic):
    """The std starts at init_noise_std for every state; the mean is act_inference's output."""
    obs = torch.randn(4, POLICY_OBS)
    dist = actor_critic.distribution(obs)
    torch.testing.assert_close(dist.stddev, torch.full((4, ACTIONS), 0.5))
    torch.testing.assert_close(dist.mean, actor_critic.act_inference(obs))
    assert math.isclose(actor_critic.log_std[0].item(), math.log(0.5), rel_tol=1e-6)
    assert actor_critic.log_std.requires_grad


def test_initial_actions_are_small():
    """The small gain of the actor's last layer keeps initial mean actions near zero."""
    torch.manual_seed(0)
    ac = ActorCritic(POLICY_OBS, CRITIC_OBS, ACTIONS, PolicyCfg())
    assert ac.act_inference(torch.randn(64, POLICY_OBS)).abs().max() < 0.2


def test_normalizers_update_only_in_training(actor_critic):
    """update_normalizers counts samples in train mode and is ignored in eval mode."""
    before = int(actor_critic.policy_normalizer.count)
    actor_critic.update_normalizers(torch.randn(10, POLICY_OBS), torch.randn(10, CRITIC_OBS))
    assert int(actor_critic.policy_normalizer.count) == before + 10
    assert int(actor_critic.critic_normalizer.count) == before + 10
    actor_critic.eval()
    actor_critic.update_normalizers(torch.randn(10, POLICY_OBS), torch.randn(10, CRITIC_OBS))
    assert int(actor_critic.policy_normalizer.count) == before + 10


def test_exportable_policy_is_a_frozen_copy(actor_critic):
    """ExportablePolicy equals act_inference and is unaffected by later training updates."""
    policy = ExportablePolicy(actor_critic)
    obs = torch.randn(6, POLICY_OBS)
    expected = actor_critic.act_inference(obs).detach()
    torch.testing.assert_close(policy(obs), expected)
    with torch.no_grad():
        actor_critic.actor[0].weight.add_(1.0)
    actor_critic.update_normalizers(torch.randn(10, POLICY_OBS), torch.randn(10, CRITIC_OBS))
    torch.testing.assert_close(policy(obs), expected)


@pytest.mark.filterwarnings('ignore::FutureWarning', 'ignore::DeprecationWarning')
@pytest.mark.parametrize('dynamo', [True, False], ids=['torch.export', 'torchscript'])
def test_onnx_export_matches_torch(actor_critic, tmp_path, dynamo):
    """The ONNX graph (opset 17, normalizer inside, dynamic batch) matches torch within 1e-5."""
    onnx = pytest.importorskip('onnx')
    ort = pytest.importorskip('onnxruntime')
    policy = ExportablePolicy(actor_critic)
    path = tmp_path / 'policy.onnx'
    if dynamo:
        dynamic = {'dynamic_shapes': {'obs': {0: torch.export.Dim('batch')}}}
    else:
        dynamic = {'dynamic_axes': {'obs': {0: 'batch'}, 'actions': {0: 'batch'}}}
    torch.onnx.export(
        policy, (torch.randn(2, POLICY_OBS),), path, input_names=['obs'],
        output_names=['actions'], opset_version=17, dynamo=dynamo, **dynamic,
    )
    model = onnx.load(path)
    assert {op.version for op in model.opset_import if op.domain in ('', 'ai.onnx')} == {17}
    assert {'Sub', 'Div', 'Clip'} <= {node.op_type for node in model.graph.node}
    session = ort.InferenceSession(str(path), providers=['CPUExecutionProvider'])
    obs = (torch.randn(11, POLICY_OBS) * 4.0 + 2.0).numpy()
    (onnx_actions,) = session.run(None, {'obs': obs})
    torch_actions = policy(torch.from_numpy(obs)).detach().numpy()
    np.testing.assert_allclose(onnx_actions, torch_actions, rtol=0.0, atol=1e-5)
