"""The hand's delta-on-target integrator and observation: the env's training side and the
deploy runtime's, built from the env's own contract, seed and integrate the same targets and
build the same policy inputs."""

import numpy as np
import pytest
import torch

from sim2real.deploy.runtime.integrators import make_integrator
from sim2real.deploy.runtime.observations import ObservationBuilder
from sim2real.mdp.contract import contract_from_env


def test_env_and_runtime_seed_and_integrate_the_same_targets(make_env):
    """After a reset the env's q* is the measured joints (encoder offsets in) clipped to the
    ranges, as the runtime seeds it at enable; 30 random outputs in [-1.5, 1.5] (clipped to
    +-1, pushing several joints into their limits) give the same q* on both sides (play: no
    actuation noise)."""
    env = make_env('hand-rotate', num_envs=4, play=True)
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
        _, _, terminated, truncated, _ = env.step(actions)
        expected = runtime.step(actions[0].double().numpy())
        if bool(terminated[0] | truncated[0]):   # a new episode: the node is re-enabled
            runtime.reset(scene.measured_joint_pos_rad(torch.arange(1))[0].numpy())
            expected = runtime.target_rad
        np.testing.assert_allclose(term.target_rad[0].numpy(), expected, rtol=0, atol=1e-12)
        bounds = limits.numpy()
        at_limit = max(at_limit, int(np.sum((expected <= bounds[:, 0] + 1e-12)
                                            | (expected >= bounds[:, 1] - 1e-12))))
    assert at_limit >= 1


def test_actuation_noise_moves_the_targets_by_its_spread(make_env):
    """Training config: zero outputs for 20 ticks move q* by the 0.1 noise x 1/24 rad per tick,
    a random walk: the per-tick steps of joints inside their ranges have a standard deviation
    of 0.1 / 24 rad within 10 %; play has none."""
    env = make_env('hand-rotate', num_envs=64)
    env.reset(seed=4)
    term = env.action_term
    limits = env.scene.joint_pos_limits_rad.double()
    steps = []
    for _ in range(20):
        before = term.target_rad.clone()
        _, _, terminated, truncated, _ = env.step(torch.zeros(64, 16))
        inside = (term.target_rad > limits[:, 0]) & (term.target_rad < limits[:, 1])
        running = ~(terminated | truncated)[:, None]
        steps.append((term.target_rad - before)[inside & running])
    spread = torch.cat(steps).std().item()
    assert abs(spread - 0.1 / 24) < 0.1 * 0.1 / 24
    play = make_env('hand-rotate', num_envs=2, play=True)
    play.reset(seed=4)
    before = play.action_term.target_rad.clone()
    play.step(torch.zeros(2, 16))
    torch.testing.assert_close(play.action_term.target_rad, before, rtol=0, atol=0)


def test_env_and_runtime_build_the_same_observations(make_env):
    """The deploy builder, fed each env's recorded joint readings and integrator targets
    (what the node's joint chain hands it), gives the env's 96-input policy vectors for 3
    envs x 24 ticks, across episode resets (play, no delays: the node reads fresh samples)."""
    def edit(cfg):
        cfg.observations['policy'].delay_ticks = (0, 0)
        cfg.episode_length_s = 0.5
    env = make_env('hand-rotate', num_envs=3, play=True, edit=edit)
    contract = contract_from_env(env)
    limits = np.asarray(contract.robot_params['joint_pos_limits_rad'])
    builders = [ObservationBuilder(contract) for _ in range(3)]
    obs = env.observations.compute()['policy']
    gen = torch.Generator().manual_seed(7)
    resets = 0
    for step in range(24):
        if step > 0:
            out, _, terminated, truncated, _ = env.step(torch.rand(3, 16, generator=gen) * 2 - 1)
            obs = out['policy']
        for i, builder in enumerate(builders):
            if step > 0 and bool(terminated[i] | truncated[i]):
                builder.reset()
                resets += 1
            inputs = {'joint_pos_rad': env.scene.joint_pos_rad[i].double().numpy(),
                      'joint_target_rad': env.action_term.target_rad[i].numpy(),
                      'joint_pos_limits_rad': limits}
            np.testing.assert_allclose(builder.build(inputs, advance=True)[0], obs[i].numpy(),
                                       atol=1e-5, rtol=0)
    assert resets >= 6


@pytest.mark.parametrize('kind', ['joint_position_offset', 'joint_position_rate_capped'])
def test_absolute_interface_targets_and_observations_match_the_runtime(make_env, kind):
    """The hand's absolute interface (joint_position_offset, [PG] RotateZ's q_home + 0.6 a):
    the observed target starts at the measured joints clipped to the ranges, then is the grasp
    pose + 0.6 clip(a) clipped to the ranges; the runtime's integrator built from the env's
    contract gives the same targets and the deploy builder the same 96 inputs, 2 envs x 20
    ticks with outputs in [-1.5, 1.5], across resets (play: no noise or delays), with targets
    at a range limit among them. The rate-capped kind (joint_position_rate_capped) moves each
    target towards that goal by at most 8.48 rad/s x 0.05 s, and moves at the cap are among
    its ticks; the offset kind's are not capped."""
    def edit(cfg):
        cfg.observations['policy'].delay_ticks = (0, 0)
        cfg.action.params['delay_ticks'] = (0, 0)
        cfg.episode_length_s = 0.4
    env = make_env('hand-rotate', num_envs=2, play=True, edit=edit, action=kind)
    env.reset(seed=3)
    term, scene = env.action_term, env.scene
    limits = scene.joint_pos_limits_rad.float()
    measured = scene.measured_joint_pos_rad(torch.arange(2)).float()
    torch.testing.assert_close(term.target_rad, measured.clamp(limits[:, 0], limits[:, 1]))
    contract = contract_from_env(env)
    assert contract.action.kind == kind
    assert contract.action.params['scale'] == 0.6
    capped = kind == 'joint_position_rate_capped'
    assert contract.action.params.get('max_rate_rad_s') == (8.48 if capped else None)
    max_step_rad = 8.48 * env.step_dt_s
    runtimes = [make_integrator(contract) for _ in range(2)]
    builders = [ObservationBuilder(contract) for _ in range(2)]
    for i, runtime in enumerate(runtimes):
        runtime.reset(measured[i].double().numpy())
    bounds = np.asarray(contract.robot_params['joint_pos_limits_rad'])
    obs = env.observations.compute()['policy']
    gen = torch.Generator().manual_seed(5)
    resets = at_limit = at_rate = over_rate = 0
    for step in range(20):
        if step > 0:
            actions = torch.rand(2, 16, generator=gen) * 3.0 - 1.5
            out, _, terminated, truncated, _ = env.step(actions)
            obs = out['policy']
        for i in range(2):
            if step > 0 and bool(terminated[i] | truncated[i]):
                runtimes[i].reset(scene.measured_joint_pos_rad(torch.tensor([i]))[0].numpy())
                builders[i].reset()
                resets += 1
            elif step > 0:
                before = runtimes[i].target_rad.copy()
                runtimes[i].step(actions[i].double().numpy())
                moved = np.abs(runtimes[i].target_rad - before)
                at_rate += int(np.sum(moved >= max_step_rad - 1e-9))
                over_rate += int(np.sum(moved > max_step_rad + 1e-6))
            np.testing.assert_allclose(term.target_rad[i].numpy(), runtimes[i].target_rad,
                                       rtol=0, atol=1e-6)
            at_limit += int(np.sum((runtimes[i].target_rad <= bounds[:, 0] + 1e-9)
                                   | (runtimes[i].target_rad >= bounds[:, 1] - 1e-9)))
            inputs = {'joint_pos_rad': scene.joint_pos_rad[i].double().numpy(),
                      'joint_target_rad': runtimes[i].target_rad,
                      'joint_pos_limits_rad': bounds}
            np.testing.assert_allclose(builders[i].build(inputs, advance=True)[0],
                                       obs[i].numpy(), atol=1e-5, rtol=0)
    assert resets >= 4 and at_limit >= 1 and at_rate >= 10
    assert (over_rate == 0) if capped else (over_rate >= 10)
