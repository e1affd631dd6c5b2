"""The hand's delta-on-target integrator: the env's training term and the deploy runtime's
integrator, built from the env's own contract, seed and integrate the same targets."""

import numpy as np
import torch

from sim2real.deploy.runtime.integrators import make_integrator
from sim2real.mdp.contract import contract_from_env


def test_env_and_runtime_seed_and_integrate_the_same_targets(make_env):
    """After a reset the env's q* is the measured joints (encoder offsets in) clipped to the
    ranges, as the runtime seeds it at enable; 30 random outputs in [-1.5, 1.5] (clipped to
    +-1, pushing several joints into their limits) give the same q* on both sides."""
    env = make_env('hand-rotate', num_envs=4)
    env.reset(seed=2)
    term, scene = env.action_term, env.scene
    measured = scene.measured_joint_pos_rad(torch.arange(4))
    limits = scene.joint_pos_limits_rad.double()
    torch.testing.assert_close(term.target_rad,
                               measured.clamp(limits[:, 0], limits[:, 1]), rtol=0, atol=0)
    contract = contract_from_env(env)
    assert contract.action.params['target_seed'] == 'measured_joint_pos_rad'
    runtime = make_integrator(contract)
    runtime.reset(measured[0].numpy())
    np.testing.assert_array_equal(runtime.target_rad, term.target_rad[0].numpy())
    gen = torch.Generator().manual_seed(0)
    at_limit = 0
    for _ in range(30):
        actions = torch.rand(4, 16, generator=gen) * 3.0 - 1.5
        env.step(actions)
        expected = runtime.step(actions[0].double().numpy())
        np.testing.assert_allclose(term.target_rad[0].numpy(), expected, rtol=0, atol=1e-12)
        bounds = limits.numpy()
        at_limit = max(at_limit, int(np.sum((expected <= bounds[:, 0] + 1e-12)
                                            | (expected >= bounds[:, 1] - 1e-12))))
    assert at_limit >= 1
