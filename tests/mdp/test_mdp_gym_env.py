"""gymnasium.vector.VectorEnv API of GymVectorEnv over real quadrotor and quadruped RLEnvs."""

import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode

from tests.mdp.conftest import STEPS

NUM_ENVS = 8
OBS = 49
"""Width of the hover policy observation (tests/tasks/test_task_sweep.py adds it up)."""


def _zeros(vec):
    """A zero action for every sub-environment."""
    return np.zeros(vec.action_space.shape, np.float32)


def test_spaces(make_vec):
    """Spaces: Box (8, 49) observations (hover policy group) and Box [-1, 1]^(8, 4) actions."""
    vec = make_vec()
    assert vec.num_envs == NUM_ENVS
    assert vec.single_observation_space.shape == (OBS,)
    assert vec.observation_space.shape == (NUM_ENVS, OBS)
    assert vec.action_space.shape == (NUM_ENVS, 4)
    assert (vec.single_action_space.low == -1).all() and (vec.single_action_space.high == 1).all()
    assert vec.metadata['autoreset_mode'] is AutoresetMode.NEXT_STEP


def test_quadruped_action_space_is_the_trained_clip_range(make_vec):
    """Quadruped actions: Box [-4, 4]^12, the action term's clip (its contract), not [-1, 1]."""
    vec = make_vec('quadruped-flat', num_envs=2)
    assert vec.env.action_term.spec().clip == 4.0
    assert vec.single_action_space.shape == (12,)
    assert (vec.single_action_space.low == -4.0).all()
    assert (vec.single_action_space.high == 4.0).all()


def test_reset_returns_obs_and_info(make_vec):
    """reset(seed) returns (obs, {}) with obs in observation_space; same seed, same obs."""
    vec = make_vec()
    obs, info = vec.reset(seed=3)
    assert info == {}
    assert obs.dtype == np.float32 and obs.shape == (NUM_ENVS, OBS)
    assert vec.observation_space.contains(obs)
    again, _ = vec.reset(seed=3)
    np.testing.assert_array_equal(obs, again)


def test_step_returns_five_tuple(make_vec):
    """step(sample) returns obs (8, 30), rewards (8,), bool terminations/truncations, {}."""
    vec = make_vec()
    vec.reset(seed=0)
    vec.action_space.seed(0)
    obs, rewards, terminated, truncated, infos = vec.step(vec.action_space.sample())
    assert obs.shape == (NUM_ENVS, OBS) and vec.observation_space.contains(obs)
    assert rewards.shape == (NUM_ENVS,) and np.isfinite(rewards).all()
    assert terminated.shape == truncated.shape == (NUM_ENVS,)
    assert terminated.dtype == truncated.dtype == np.bool_
    assert infos == {}


def test_seed_list_is_a_deterministic_function_of_the_list(make_vec):
    """reset(seed=[...]): equal lists give equal 8-step episodes, another list other ones."""
    vec = make_vec(short=False)

    def run(seed):
        out = [vec.reset(seed=seed)[0]]
        out += [vec.step(np.full(vec.action_space.shape, 0.1, np.float32))[0] for _ in range(8)]
        return np.stack(out)
    first = run(list(range(NUM_ENVS)))
    np.testing.assert_array_equal(first, run(list(range(NUM_ENVS))))
    assert not np.allclose(first, run(list(range(1, NUM_ENVS + 1))))


def test_seed_list_errors_name_the_fault(make_vec):
    """A seed list of the wrong length, or mixing ints and None, is refused by name."""
    vec = make_vec()
    with pytest.raises(ValueError, match='one seed per sub-environment.*8.*got 3'):
        vec.reset(seed=[1, 2, 3])
    with pytest.raises(ValueError, match='all ints or all None'):
        vec.reset(seed=[1] + [None] * (NUM_ENVS - 1))
    obs, _ = vec.reset(seed=[None] * NUM_ENVS)   # all None: no reseed, like seed=None
    assert obs.shape == (NUM_ENVS, OBS)


def test_reset_mask_resets_only_the_masked_envs(make_vec):
    """options reset_mask: envs 1 and 5 restart (length 0), the others keep obs and length 3."""
    vec = make_vec(short=False)
    vec.reset(seed=0)
    for _ in range(3):
        last, *_ = vec.step(_zeros(vec))
    mask = np.zeros(NUM_ENVS, dtype=bool)
    mask[[1, 5]] = True
    options = {'reset_mask': mask}
    obs, info = vec.reset(options=options)
    assert info == {} and options == {'reset_mask': mask}   # the caller's dict is not consumed
    assert vec.env.episode_length.tolist() == [3, 0, 3, 3, 3, 0, 3, 3]
    np.testing.assert_array_equal(obs[~mask], last[~mask])
    assert not np.allclose(obs[mask], last[mask])
    vec.step(_zeros(vec))
    assert vec.env.episode_length.tolist() == [4, 1, 4, 4, 4, 1, 4, 4]


def test_reset_mask_errors_name_the_fault(make_vec):
    """reset_mask must be a bool numpy array of shape (8,) with a True; unknown options refused."""
    vec = make_vec()
    with pytest.raises(TypeError, match='reset_mask.*numpy array'):
        vec.reset(options={'reset_mask': [True] * NUM_ENVS})
    with pytest.raises(ValueError, match=r'reset_mask.*shape \(8,\)'):
        vec.reset(options={'reset_mask': np.ones(3, dtype=bool)})
    with pytest.raises(TypeError, match='reset_mask.*bool'):
        vec.reset(options={'reset_mask': np.ones(NUM_ENVS)})
    with pytest.raises(ValueError, match='reset_mask.*at least one True'):
        vec.reset(options={'reset_mask': np.zeros(NUM_ENVS, dtype=bool)})
    with pytest.raises(ValueError, match="unknown reset option.*'flag'"):
        vec.reset(options={'flag': 1})


def test_next_step_autoreset(make_vec):
    """NEXT_STEP: step 5 returns the last obs, step 6 resets (reward 0, length 0), 11 ends."""
    vec = make_vec()
    vec.reset(seed=0)
    for _ in range(STEPS - 1):
        before, _, terminated, truncated, _ = vec.step(_zeros(vec))
        assert not (terminated | truncated).any()
    final, _, terminated, truncated, infos = vec.step(_zeros(vec))
    assert truncated.all() and not terminated.any() and 'final_obs' not in infos
    # the last obs continues the episode: the position error moves ~1 cm in 10 ms (plus
    # observation noise of std 0.01 m), a new start is up to 1 m away
    assert np.abs(final[:, :3] - before[:, :3]).max() < 0.1
    obs, rewards, terminated, truncated, infos = vec.step(_zeros(vec))
    assert (rewards == 0).all() and not (terminated | truncated).any() and infos == {}
    assert not np.allclose(final[:, :3], obs[:, :3])   # a new start around a new target
    assert vec.env.episode_length.tolist() == [0] * NUM_ENVS
    for _ in range(STEPS - 1):
        assert not vec.step(_zeros(vec))[3].any()
    assert vec.step(_zeros(vec))[3].all()


def test_episode_log_per_env(make_vec):
    """NEXT_STEP infos['log'] at step 5: per-env arrays with '_' masks; return = reward sum."""
    vec = make_vec()
    vec.reset(seed=0)
    total = np.zeros(NUM_ENVS)
    for _ in range(STEPS):
        _, rewards, _, _, infos = vec.step(_zeros(vec))
        total += rewards
    log = infos['log']
    assert infos['_log'].tolist() == [True] * NUM_ENVS
    np.testing.assert_allclose(log['episode/return'], total, rtol=1e-5)
    assert log['episode/length'].tolist() == [STEPS] * NUM_ENVS
    assert log['termination/time_out'].all() and not log['termination/crash'].any()
    assert log['_episode/return'].all() and log['reward/alive'].shape == (NUM_ENVS,)
    # alive pays weight 1 x dt 0.01 s per step
    np.testing.assert_allclose(log['reward/alive'], STEPS * 0.01, rtol=1e-5)
    # success needs the whole 2 s window (200 steps) within 0.1 m: no 5-step episode has it
    assert log['episode/success'].tolist() == [False] * NUM_ENVS


def test_same_step_final_obs_and_final_info(make_vec):
    """SAME_STEP: step 5 gives every env's final_obs and final_info['log'], obs a new start."""
    vec = make_vec(autoreset_mode=AutoresetMode.SAME_STEP)
    assert vec.metadata['autoreset_mode'] is AutoresetMode.SAME_STEP
    vec.reset(seed=0)
    total = np.zeros(NUM_ENVS)
    for _ in range(STEPS):
        obs, rewards, terminated, truncated, infos = vec.step(_zeros(vec))
        total += rewards
    assert truncated.all() and not terminated.any()
    assert infos['_final_obs'].tolist() == [True] * NUM_ENVS
    assert infos['final_obs'].shape == (NUM_ENVS,)
    for row in infos['final_obs']:
        assert row.dtype == np.float32 and row.shape == (OBS,) and np.isfinite(row).all()
    final = np.stack(list(infos['final_obs']))
    assert not np.allclose(final[:, :3], obs[:, :3])
    assert infos['_final_info'].tolist() == [True] * NUM_ENVS and 'log' not in infos
    np.testing.assert_allclose(infos['final_info']['log']['episode/return'], total, rtol=1e-5)
    assert infos['final_info']['_log'].all()


def test_same_step_final_obs_only_for_the_crashed_env(make_vec):
    """SAME_STEP: env 2 put at 1 cm height crashes on the next step: only its entries are set."""
    vec = make_vec(autoreset_mode=AutoresetMode.SAME_STEP)
    vec.reset(seed=0)
    backend = vec.env.scene.backend
    backend.qpos[2, 0:3] = torch.tensor([0.0, 0.0, 0.01], dtype=torch.float64)
    backend.qvel[2] = 0.0
    _, _, terminated, truncated, infos = vec.step(_zeros(vec))
    expected = [i == 2 for i in range(NUM_ENVS)]
    assert terminated.tolist() == expected and not truncated.any()
    assert infos['_final_obs'].tolist() == expected == infos['_final_info'].tolist()
    assert [row is None for row in infos['final_obs']] == [not e for e in expected]
    assert infos['final_obs'][2].shape == (OBS,)
    log = infos['final_info']['log']
    assert log['_termination/crash'].tolist() == expected
    assert log['termination/crash'].tolist() == expected
    assert log['episode/length'][2] == 1


def test_disabled_autoreset_needs_a_masked_reset(make_vec):
    """DISABLED: stepping a finished env is refused by id until reset_mask restarts it."""
    vec = make_vec(autoreset_mode='Disabled')
    vec.reset(seed=0)
    for _ in range(STEPS):
        _, _, terminated, truncated, _ = vec.step(_zeros(vec))
    with pytest.raises(RuntimeError, match=r'sub-environments \[0, 1, .*7\] finished'):
        vec.step(_zeros(vec))
    vec.reset(options={'reset_mask': terminated | truncated})
    assert vec.env.episode_length.tolist() == [0] * NUM_ENVS
    assert not vec.step(_zeros(vec))[3].any()


def test_unknown_autoreset_mode_is_refused(make_vec):
    """An autoreset_mode outside Gymnasium's three is refused, naming them."""
    with pytest.raises(ValueError, match='autoreset_mode.*NextStep'):
        make_vec(autoreset_mode='Sometimes')


def test_closed_env_refuses_step_and_reset(make_vec):
    """After close(), step() and reset() raise naming the closed env; close() again is fine."""
    vec = make_vec()
    vec.reset(seed=0)
    vec.close()
    assert vec.closed
    with pytest.raises(RuntimeError, match='closed'):
        vec.step(_zeros(vec))
    with pytest.raises(RuntimeError, match='closed'):
        vec.reset(seed=0)
    vec.close()


def test_bad_action_shape_is_refused(make_vec):
    """Actions of shape (8, 3) for a (8, 4) action space are refused, naming both shapes."""
    vec = make_vec()
    vec.reset(seed=0)
    with pytest.raises(ValueError, match=r'actions of shape \(8, 3\).*\(8, 4\)'):
        vec.step(np.zeros((NUM_ENVS, 3), np.float32))


@pytest.mark.parametrize('task', ['quadrotor-hover', 'quadruped-flat'])
def test_reset_seed_gives_equal_trajectories_across_build_seeds(make_vec, task):
    """reset(seed=5) on envs built with seeds 0 and 1: 30 steps of equal obs and rewards."""
    a, b = (make_vec(task, num_envs=4, seed=s, short=False) for s in (0, 1))
    obs_a, _ = a.reset(seed=5)
    obs_b, _ = b.reset(seed=5)
    np.testing.assert_array_equal(obs_a, obs_b)
    a.action_space.seed(0)
    for _ in range(30):
        action = 0.3 * a.action_space.sample()
        step_a, step_b = a.step(action), b.step(action)
        for x, y in zip(step_a[:4], step_b[:4]):
            np.testing.assert_array_equal(x, y)
