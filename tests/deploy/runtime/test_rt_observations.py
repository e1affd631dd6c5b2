"""Deploy observations equal the training env's policy observations for the same raw state."""

import numpy as np
import pytest
import torch

from sim2real import terms
from sim2real.contract import ContractError, ObservationTermSpec
from sim2real.deploy.runtime import PolicyRunner, Runtime, Sample
from sim2real.deploy.runtime.observations import ObservationBuilder
from sim2real.mdp.contract import contract_from_env


def _bridge_odom(qpos, qvel, stamp_s):
    """An odom sample built from MuJoCo free-joint state the way the HIL bridge builds it."""
    rotmat = terms.quat_to_rotmat(qpos[3:7])
    values = {'pos_w': qpos[:3].copy(), 'quat_wxyz': qpos[3:7].copy(),
              'lin_vel_b': terms.rotate_world_to_body(rotmat, qvel[:3]),
              'ang_vel_b': qvel[3:6].copy()}   # MuJoCo's free-joint angular velocity is body
    return Sample(values, stamp_s, stamp_s)


def test_runtime_observation_matches_env_for_20_random_steps(make_env, quad_params_file):
    """3 envs x 21 states (4-deep action history, the task's velocity and rate history, a
    time-out reset at step 10): <= 1e-5."""
    def no_obs_delay(cfg):
        group = cfg.observations['policy']
        group.delay_ticks, group.jitter_prob, group.dropout_prob = (0, 0), 0.0, (0.0, 0.0)
        cfg.episode_length_s = 0.1
    env = make_env(num_envs=3, play=True, edit=no_obs_delay)
    runtimes = [Runtime.from_files(None, quad_params_file) for _ in range(3)]
    obs = env.observations.compute()['policy']
    gen = torch.Generator().manual_seed(3)
    compared = resets = 0
    for step in range(21):
        if step > 0:
            actions = 1.5 * torch.randn(3, 4, generator=gen)
            obs_dict, _, terminated, truncated, _ = env.step(actions)
            obs = obs_dict['policy']
        qpos, qvel = env.scene.backend.qpos.numpy(), env.scene.backend.qvel.numpy()
        target = env.command('target').pos_w.numpy()
        for i, runtime in enumerate(runtimes):
            if step > 0:
                runtime.integrator.step(actions[i].numpy())
                if bool(terminated[i] | truncated[i]):
                    runtime.integrator.reset()
                    runtime.builder.reset()
                    resets += 1
            runtime.put('odom', _bridge_odom(qpos[i], qvel[i], float(step)))
            runtime.put('setpoint', Sample({'pos_w': target[i]}, float(step), float(step)))
            got = runtime.observation(advance=True)
            assert got.dtype == np.float32 and got.shape == (1, 49)
            np.testing.assert_allclose(got[0], obs[i].numpy(), atol=1e-5, rtol=0)
            compared += 1
    assert compared == 63 and resets >= 3
    assert env.action_term.history.shape == (3, 4, 4)


def _env_inputs(env, i):
    """The builder's inputs of env i, read from the env's own state (float64)."""
    scene = env.scene
    return {'pos_w': scene.pos_w[i], 'target_pos_w': env.command('target').pos_w[i],
            'rotmat_wb': scene.rotmat_wb[i], 'lin_vel_b': scene.lin_vel_b[i],
            'ang_vel_b': scene.ang_vel_b[i], 'action_history': env.action_term.history[i]}


def test_term_history_matches_env_across_resets(make_env):
    """ang_vel_b x4 and lin_vel_b x3 stacked: the builder (history restarted where the env
    reset, as enable() does) gives the env's vectors for 3 envs x 16 ticks within 1e-5."""
    def edit(cfg):
        group = cfg.observations['policy']
        group.delay_ticks, group.jitter_prob, group.dropout_prob = (0, 0), 0.0, (0.0, 0.0)
        group.terms['ang_vel_b'].history_length = 4
        group.terms['lin_vel_b'].history_length = 3
        cfg.episode_length_s = 0.06
    env = make_env(num_envs=3, play=True, edit=edit)
    contract = contract_from_env(env)
    assert contract.observation_size == 34 + 3 * 3 + 3 * 2
    builders = [ObservationBuilder(contract) for _ in range(3)]
    obs = env.observations.compute()['policy']
    gen = torch.Generator().manual_seed(5)
    resets = 0
    for step in range(16):
        if step > 0:
            obs_dict, _, terminated, truncated, _ = env.step(torch.randn(3, 4, generator=gen))
            obs = obs_dict['policy']
        for i, builder in enumerate(builders):
            if step > 0 and bool(terminated[i] | truncated[i]):
                builder.reset()
                resets += 1
            inputs = {k: v.double().numpy() for k, v in _env_inputs(env, i).items()}
            np.testing.assert_allclose(builder.build(inputs, advance=True)[0], obs[i].numpy(),
                                       atol=1e-5, rtol=0)
    assert resets >= 6


def test_scale_and_clip_follow_the_contract(quad_contract):
    """lin_vel_b (scale 0.5, clip 5): 4 m/s -> 2, 30 m/s -> 5 (the first tick fills its 3
    ticks of history); ang_vel_b (4 ticks) scale 0.25, clip 10; rotation identity row-major."""
    builder = ObservationBuilder(quad_contract)
    obs = builder.build({
        'pos_w': np.zeros(3), 'target_pos_w': np.array([3.0, 0.0, -1.0]),
        'rotmat_wb': np.eye(3), 'lin_vel_b': np.array([4.0, 30.0, -30.0]),
        'ang_vel_b': np.array([1.0, 0.0, 80.0]), 'action_history': np.ones((4, 4))})
    np.testing.assert_allclose(obs[0, 0:3], [2.0, 0.0, -1.0])          # clip 2
    np.testing.assert_allclose(obs[0, 3:12], np.eye(3).reshape(-1))
    np.testing.assert_allclose(obs[0, 12:21], [2.0, 5.0, -5.0] * 3)
    np.testing.assert_allclose(obs[0, 21:33], [0.25, 0.0, 10.0] * 4)   # scale .25, clip 10
    np.testing.assert_allclose(obs[0, 33:49], np.ones(16))


def test_unknown_term_is_named(quad_contract):
    """A term the runtime does not know is refused as observations[5].name."""
    contract = type(quad_contract).from_json(quad_contract.to_json())
    contract.observations.append(ObservationTermSpec('foot_contacts', 4))
    with pytest.raises(ContractError, match=r'observations\[5\]\.name'):
        ObservationBuilder(contract)


def test_a_registered_term_is_built_and_its_size_checked(quad_contract, monkeypatch):
    """register_term adds 'foot_contacts' (size 4): built from its input after the
    contract's terms; a contract giving it 3 entries is refused; a second function under the
    name is an error."""
    from sim2real.deploy.runtime import observations
    monkeypatch.setattr(observations, 'TERMS', dict(observations.TERMS))
    monkeypatch.setattr(observations, '_REGISTERED', {})

    def contacts(s):
        return s['foot_contacts']
    observations.register_term('foot_contacts', contacts, 4)
    observations.register_term('foot_contacts', contacts, 4)   # the same function: no-op
    with pytest.raises(ValueError, match='already registered'):
        observations.register_term('foot_contacts', lambda s: s['x'], 4)
    contract = type(quad_contract).from_json(quad_contract.to_json())
    contract.observations.append(ObservationTermSpec('foot_contacts', 4))
    obs = ObservationBuilder(contract).build({
        'pos_w': np.zeros(3), 'target_pos_w': np.zeros(3), 'rotmat_wb': np.eye(3),
        'lin_vel_b': np.zeros(3), 'ang_vel_b': np.zeros(3), 'action_history': np.zeros((4, 4)),
        'foot_contacts': np.array([1.0, 0.0, 1.0, 1.0])})
    np.testing.assert_allclose(obs[0, -4:], [1.0, 0.0, 1.0, 1.0])
    contract.observations[-1] = ObservationTermSpec('foot_contacts', 3)
    with pytest.raises(ContractError, match=r'observations\[5\]\.size'):
        ObservationBuilder(contract)


def test_policy_runner_uses_one_thread_each_and_is_deterministic(quad_policy):
    """1 intra-op and 1 inter-op thread; same input -> identical (4,) float64 output."""
    runner = PolicyRunner(quad_policy)
    options = runner.session.get_session_options()
    assert (options.intra_op_num_threads, options.inter_op_num_threads) == (1, 1)
    obs = np.linspace(-1, 1, runner.contract.observation_size, dtype=np.float32)[None, :]
    (first, wall_s), (second, _) = runner.run(obs), runner.run(obs)
    assert first.shape == (4,) and first.dtype == np.float64 and wall_s > 0.0
    np.testing.assert_array_equal(first, second)
