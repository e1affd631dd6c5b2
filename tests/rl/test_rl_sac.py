"""SAC behind the algorithm seam: its squashed-Gaussian density, that it learns, checkpoints."""

from __future__ import annotations

import math

import pytest
import torch
from torch.distributions import AffineTransform, Normal, TanhTransform, TransformedDistribution

from sim2real.algo_cfg import PolicyCfg, SACCfg
from sim2real.rl import Runner, RunnerCfg
from sim2real.rl.checkpoint import CheckpointError, latest_checkpoint
from sim2real.rl.sac import project_onto_support, SACModel
from tests.rl.test_rl_runner import assert_state_equal, make_runner, PointMassEnv

SMALL = PolicyCfg(actor_hidden_dims=(64, 64), critic_hidden_dims=(64, 64), init_noise_std=0.5)


def sac_cfg(**changes) -> SACCfg:
    """A SAC config small enough for a point mass in seconds."""
    base = dict(batch_size=256, learning_starts=512, buffer_size=20_000, policy=SMALL)
    return SACCfg(**{**base, **changes})


def sac_runner(tmp_path, env, max_iterations=600, **changes) -> Runner:
    """A quiet SAC runner on env."""
    runner_cfg = RunnerCfg(max_iterations=max_iterations, save_interval=10 ** 6, seed=1,
                           progress_bar=False, log_interval=100)
    return Runner(env, sac_cfg(**changes), runner_cfg, tmp_path)


def fixed_start_return(policy) -> float:
    """Mean return of a policy from 64 fixed starts spread over [-2, 2] m, one episode."""
    env = PointMassEnv(64, random_init=False)
    obs, total = env.reset(), torch.zeros(64)
    for _ in range(env.episode_length):
        with torch.no_grad():
            obs, rewards, *_ = env.step(policy(obs['policy']))
        total += rewards
    return total.mean().item()


@pytest.mark.parametrize('bound', [1.0, 2.5])
def test_log_density_matches_torch_transformed_normal(bound):
    """log pi(a) of the squashed sample equals torch's Normal -> tanh -> x bound density."""
    model = SACModel(3, 4, 2, sac_cfg(action_bound=bound))
    obs = torch.randn(256, 3)
    actions, log_prob = model.sample(obs, torch.Generator().manual_seed(0))
    out = model.actor(model.norm_policy(obs))
    mean, log_std = out[:, :2], out[:, 2:].clamp(*model.log_std_range)
    dist = TransformedDistribution(Normal(mean, log_std.exp()),
                                   [TanhTransform(), AffineTransform(0.0, bound)])
    a = actions.clamp(-bound * (1 - 1e-6), bound * (1 - 1e-6))
    torch.testing.assert_close(log_prob, dist.log_prob(a).sum(-1), atol=2e-3, rtol=1e-4)
    assert actions.abs().max() <= bound


def test_initial_policy_std_and_temperature():
    """The pre-tanh std starts at init_noise_std and alpha at init_alpha."""
    model = SACModel(3, 4, 2, sac_cfg(init_alpha=0.2))
    out = model.actor(torch.zeros(5, 3))
    torch.testing.assert_close(out[:, 2:].exp(), torch.full((5, 2), 0.5))
    assert math.isclose(model.log_alpha.exp().item(), 0.2, rel_tol=1e-6)


@pytest.fixture(scope='module')
def sac_trained(tmp_path_factory):
    """SAC trained 600 iterations (19 k steps) on 32 random-start point masses."""
    torch.set_num_threads(1)
    env = PointMassEnv(32)
    env.final_obs_groups = ('policy', 'critic')
    runner = sac_runner(tmp_path_factory.mktemp('sac'), env)
    return runner, runner.learn()


def test_sac_learns_the_point_mass(sac_trained):
    """The deterministic policy holds the masses far better than doing nothing (-33): a
    bang-bang controller reaches about -8 from these starts."""
    runner, summary = sac_trained
    zero = fixed_start_return(lambda obs: torch.zeros(obs.shape[0], 1))
    learned = fixed_start_return(runner.algo.inference_policy())
    assert zero < -30.0
    assert learned > -14.0, (learned, zero)
    assert summary['env_steps'] == 600 * 32
    assert runner.history[-1]['train/buffer_size'] == 600 * 32
    assert 0.0 < runner.history[-1]['train/alpha'] < 0.1   # the temperature adapted


def test_c51_projection_keeps_mass_and_mean_inside_the_support():
    """Atoms on the support stay; half a spacing off they split evenly (the mean kept);
    past the ends they pile up on the end atoms; every row keeps its mass."""
    support = torch.linspace(-1.0, 1.0, 5)   # spacing 0.5
    probs = torch.tensor([[0.1, 0.2, 0.3, 0.25, 0.15]] * 3)
    atoms = torch.stack([support, support + 0.25, support * 4.0])
    out = project_onto_support(atoms, probs, support)
    torch.testing.assert_close(out.sum(-1), torch.ones(3))
    torch.testing.assert_close(out[0], probs[0])
    mean_in = (probs[1] * atoms[1]).sum().clamp(max=1.0)
    inside = (probs[1, :4] * atoms[1, :4]).sum() + probs[1, 4] * 1.0   # last atom clamped
    torch.testing.assert_close((out[1] * support).sum(), inside)
    assert mean_in > 0 and out[1, 0] == pytest.approx(0.05)
    torch.testing.assert_close(out[2], torch.tensor([0.3, 0.0, 0.3, 0.0, 0.4]))


def test_distributional_sac_learns_the_point_mass(tmp_path):
    """With C51 critics (51 atoms on [-20, 20]) SAC learns the point mass too (-13.9 from
    -33 doing nothing; scalar critics: -12.0), and the critics' mean Q agrees with the
    scalar critics' (-6.7 at the end; the initial distribution's mean is 0)."""
    torch.set_num_threads(1)
    env = PointMassEnv(32)
    env.final_obs_groups = ('policy', 'critic')
    runner = sac_runner(tmp_path, env, critic_atoms=51, q_min=-20.0, q_max=20.0)
    runner.learn()
    learned = fixed_start_return(runner.algo.inference_policy())
    assert learned > -16.0, learned
    q_mean = runner.history[-1]['train/q_mean']
    assert -10.0 < q_mean < -3.0, q_mean


def test_sac_checkpoint_round_trip_and_algorithm_check(sac_trained, tmp_path):
    """A fresh SAC runner loads the checkpoint bit for bit; a PPO runner refuses it, and a
    SAC runner refuses a PPO checkpoint."""
    runner, _ = sac_trained
    path = latest_checkpoint(runner.run_dir)
    fresh = sac_runner(tmp_path / 'sac', PointMassEnv(32))
    fresh.load(path)
    assert_state_equal(fresh.algo.model.state_dict(), runner.algo.model.state_dict())
    assert fresh.iteration == runner.iteration and fresh.env_steps == runner.env_steps
    assert fresh.algo.gradient_steps == runner.algo.gradient_steps
    ppo = make_runner(tmp_path / 'ppo', PointMassEnv(32))
    with pytest.raises(CheckpointError, match='written by sac, not ppo'):
        ppo.load(path)
    ppo.save()
    with pytest.raises(CheckpointError, match='written by ppo'):
        fresh.load(latest_checkpoint(tmp_path / 'ppo'))


def test_sac_needs_the_last_observations_of_ended_episodes(tmp_path):
    """An env that cannot report them is refused before the first step."""
    class NoFinal:
        num_envs, num_actions, obs_dims = 4, 1, {'policy': 2, 'critic': 3}

        def reset(self, seed=None):
            return {'policy': torch.zeros(4, 2), 'critic': torch.zeros(4, 3)}
    runner = sac_runner(tmp_path, NoFinal(), max_iterations=1)
    with pytest.raises(TypeError, match='final_obs_groups'):
        runner.learn()
