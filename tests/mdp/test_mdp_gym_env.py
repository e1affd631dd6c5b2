"""gymnasium.vector.VectorEnv API of GymVectorEnv over a real quadrotor RLEnv."""

import gymnasium as gym
import numpy as np
import pytest
import torch

from sim2real.mdp.gym_env import GymVectorEnv

NUM_ENVS = 8


@pytest.fixture
def vec_env(make_env):
    """A hover GymVectorEnv of 8 envs whose episodes time out after 5 policy steps."""
    def short(cfg):
        cfg.episode_length_s = 5 * cfg.physics_dt_s * cfg.decimation
    return GymVectorEnv(make_env(num_envs=NUM_ENVS, edit=short))


def test_spaces(vec_env):
    """Spaces: Box (8, 30) observations (hover policy group) and Box [-1, 1]^(8, 4) actions."""
    assert isinstance(vec_env, gym.vector.VectorEnv)
    assert vec_env.num_envs == NUM_ENVS
    assert vec_env.single_observation_space.shape == (30,)
    assert vec_env.observation_space.shape == (NUM_ENVS, 30)
    assert vec_env.action_space.shape == (NUM_ENVS, 4)
    assert (vec_env.single_action_space.low == -1).all()
    assert (vec_env.single_action_space.high == 1).all()


def test_reset_returns_obs_and_info(vec_env):
    """reset(seed) returns (obs, info) with obs in observation_space; same seed, same obs."""
    obs, info = vec_env.reset(seed=3)
    assert isinstance(info, dict)
    assert obs.dtype == np.float32 and obs.shape == (NUM_ENVS, 30)
    assert vec_env.observation_space.contains(obs)
    again, _ = vec_env.reset(seed=3)
    np.testing.assert_array_equal(obs, again)


def test_step_returns_five_tuple(vec_env):
    """step(sample) returns obs (8, 30), rewards (8,), bool terminations/truncations, a dict."""
    vec_env.reset(seed=0)
    vec_env.action_space.seed(0)
    result = vec_env.step(vec_env.action_space.sample())
    assert len(result) == 5
    obs, rewards, terminated, truncated, infos = result
    assert obs.shape == (NUM_ENVS, 30) and vec_env.observation_space.contains(obs)
    assert rewards.shape == (NUM_ENVS,) and np.isfinite(rewards).all()
    assert terminated.shape == truncated.shape == (NUM_ENVS,)
    assert terminated.dtype == truncated.dtype == np.bool_
    assert isinstance(infos, dict) and 'final_obs' not in infos


def test_final_obs_when_every_env_times_out(vec_env):
    """At the 5th step all episodes time out: final_obs is (8,) of (30,) float32 last obs."""
    vec_env.reset(seed=0)
    zeros = np.zeros((NUM_ENVS, 4), np.float32)
    for _ in range(4):
        _, _, terminated, truncated, infos = vec_env.step(zeros)
        assert not (terminated | truncated).any() and 'final_obs' not in infos
    obs, _, terminated, truncated, infos = vec_env.step(zeros)
    assert truncated.all() and not terminated.any()
    assert infos['_final_obs'].tolist() == [True] * NUM_ENVS
    assert infos['final_obs'].shape == (NUM_ENVS,)
    for row in infos['final_obs']:
        assert row.dtype == np.float32 and row.shape == (30,) and np.isfinite(row).all()
    final = np.stack(list(infos['final_obs']))
    # the returned obs already belongs to the new episode, drawn at a new start position
    assert not np.allclose(final[:, :3], obs[:, :3])
    assert 'episode/return' in infos['log']


def test_final_obs_only_for_the_crashed_env(vec_env):
    """Env 2 put at 1 cm height crashes on the next step: only final_obs[2] is set."""
    vec_env.reset(seed=0)
    backend = vec_env.env.scene.backend
    backend.qpos[2, 0:3] = torch.tensor([0.0, 0.0, 0.01], dtype=torch.float64)
    backend.qvel[2] = 0.0
    _, _, terminated, truncated, infos = vec_env.step(np.zeros((NUM_ENVS, 4), np.float32))
    expected = [i == 2 for i in range(NUM_ENVS)]
    assert terminated.tolist() == expected and not truncated.any()
    assert infos['_final_obs'].tolist() == expected
    assert infos['final_obs'].shape == (NUM_ENVS,)
    assert [row is None for row in infos['final_obs']] == [not e for e in expected]
    assert infos['final_obs'][2].shape == (30,)
    assert infos['log']['termination/crash'] == 1.0
