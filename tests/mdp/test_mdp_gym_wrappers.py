"""GymVectorEnv under Gymnasium's own env checks and standard vector wrappers, on real
quadrotor and quadruped envs."""

import numpy as np
import pytest
from gymnasium.utils import env_checker, passive_env_checker
from gymnasium.utils.env_match import check_environments_match
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers import vector as wrappers

from tests.mdp.conftest import STEPS

NUM_ENVS = 4
TASKS = ['quadrotor-hover', 'quadruped-flat']


def _zeros(vec):
    """A zero action for every sub-environment."""
    return np.zeros(vec.action_space.shape, np.float32)


@pytest.mark.parametrize('task', TASKS)
def test_gymnasium_reset_and_space_checks(make_vec, task):
    """Gymnasium's space, reset-type, np_random seeding, options and passive reset checks."""
    vec = make_vec(task)
    passive_env_checker.check_action_space(vec.action_space)
    passive_env_checker.check_observation_space(vec.observation_space)
    env_checker.check_reset_return_type(vec)
    env_checker.check_reset_seed_determinism(vec)
    env_checker.check_reset_options(vec)
    passive_env_checker.env_reset_passive_checker(vec, seed=1)
    vec.reset(seed=123)
    assert vec.np_random_seed == 123


@pytest.mark.parametrize('task', TASKS)
def test_gymnasium_returned_data_not_reused(make_vec, task):
    """Gymnasium's check_returned_data_not_reused passes (1 env: it reads dones as bools)."""
    env_checker.check_returned_data_not_reused(make_vec(task, num_envs=1))


def test_gymnasium_environments_match_after_reseed(make_vec):
    """check_environments_match: quadrupeds built with seeds 0, 1 match 40 steps of seed 5."""
    a, b = (make_vec('quadruped-flat', num_envs=1, seed=s, short=False) for s in (0, 1))
    check_environments_match(a, b, num_steps=40, seed=5)


def test_dict_info_to_list(make_vec):
    """DictInfoToList: {} per env before the end, then one dict per env with its own log."""
    vec = wrappers.DictInfoToList(make_vec())
    vec.reset(seed=0)
    total = np.zeros(NUM_ENVS)
    for step in range(STEPS):
        _, rewards, _, _, infos = vec.step(_zeros(vec))
        total += rewards
        assert isinstance(infos, list) and len(infos) == NUM_ENVS
        if step < STEPS - 1:
            assert infos == [{}] * NUM_ENVS
    for i, info in enumerate(infos):
        assert info['log']['episode/length'] == STEPS
        assert info['log']['termination/time_out']
        assert info['log']['episode/return'] == pytest.approx(total[i], rel=1e-5)


@pytest.mark.parametrize('task', TASKS)
def test_normalize_and_flatten_observation(make_vec, task):
    """Normalize- over FlattenObservation: accepted, statistics count 1e-4 + 4 x 13 updates."""
    vec = wrappers.NormalizeObservation(wrappers.FlattenObservation(make_vec(task)))
    obs, _ = vec.reset(seed=0)
    for _ in range(12):
        obs, *_ = vec.step(_zeros(vec))
    assert vec.obs_rms.count == pytest.approx(1e-4 + NUM_ENVS * 13)
    assert obs.shape == vec.observation_space.shape and np.isfinite(obs).all()


@pytest.mark.parametrize('mode', [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_record_episode_statistics(make_vec, mode):
    """RecordEpisodeStatistics: two rounds of 5-step episodes, each l = 5 and r = our return."""
    vec = wrappers.RecordEpisodeStatistics(make_vec(autoreset_mode=mode))
    vec.reset(seed=0)
    ended = []
    for _ in range(2 * STEPS + 1):
        *_, infos = vec.step(_zeros(vec))
        if 'episode' in infos:
            log = infos['log'] if mode is AutoresetMode.NEXT_STEP else infos['final_info']['log']
            np.testing.assert_allclose(infos['episode']['r'], log['episode/return'], rtol=1e-5)
            ended.append(infos['episode']['l'].tolist())
    assert ended == [[STEPS] * NUM_ENVS] * 2


def test_normalize_reward_skips_the_reset_step(make_vec):
    """NormalizeReward counts 5 steps x 4 envs (1e-4 + 20), not the 6th (the reset step)."""
    vec = wrappers.NormalizeReward(make_vec())
    vec.reset(seed=0)
    for _ in range(STEPS + 1):
        _, rewards, *_ = vec.step(_zeros(vec))
        assert np.isfinite(rewards).all()
    assert vec.return_rms.count == pytest.approx(1e-4 + NUM_ENVS * STEPS)


def test_clip_and_rescale_action_keep_the_trained_range(make_vec):
    """Quadruped: ClipAction passes 3.5 unchanged; RescaleAction maps [-1, 1] onto [-4, 4]."""
    vec = make_vec('quadruped-flat', short=False)
    term = vec.env.action_term
    clipped = wrappers.ClipAction(vec)
    clipped.reset(seed=0)
    clipped.step(np.full(vec.action_space.shape, 3.5, np.float32))
    assert term.last_action.unique().tolist() == [3.5]
    rescaled = wrappers.RescaleAction(vec, min_action=np.float32(-1), max_action=np.float32(1))
    rescaled.step(np.full(vec.action_space.shape, -0.5, np.float32))
    assert term.last_action.unique().tolist() == [-2.0]


@pytest.mark.parametrize('task', TASKS)
def test_standard_wrapper_stack(make_vec, task):
    """Six standard wrappers stacked: 2+ episodes per env, each with l = our logged length."""
    vec = make_vec(task)
    for wrapper in (wrappers.FlattenObservation, wrappers.NormalizeObservation,
                    wrappers.RecordEpisodeStatistics, wrappers.NormalizeReward,
                    wrappers.ClipAction, wrappers.DictInfoToList):
        vec = wrapper(vec)
    vec.reset(seed=0)
    vec.action_space.seed(0)
    ended = np.zeros(NUM_ENVS, dtype=int)
    for _ in range(2 * STEPS + 1):
        obs, rewards, _, _, infos = vec.step(vec.action_space.sample())
        assert np.isfinite(obs).all() and np.isfinite(rewards).all()
        for i, info in enumerate(infos):
            if 'episode' in info:
                assert info['episode']['l'] == info['log']['episode/length'] <= STEPS
                ended[i] += 1
    assert (ended >= 2).all()
