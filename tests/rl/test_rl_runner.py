"""End-to-end tests of Runner on a tiny batched point-mass task."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest
import torch

from sim2real.rl import Runner, PolicyCfg, PPOCfg, RunnerCfg, latest_checkpoint
from sim2real.rl.checkpoint import list_checkpoints, load_checkpoint


class PointMassEnv:
    """N 1-D point masses that must be pushed to the origin and held there.

    policy obs = [position error, velocity]; critic obs adds the episode's elapsed fraction
    (privileged). Reward = -error^2 - 0.01 force^2 per step, force clipped to [-1, 1].
    Episodes time out after episode_length steps or terminate when |position| > 3 m.
    With random_init=False all episodes start from the same positions, so a run is fully
    determined by the policy.
    """

    num_actions = 1
    obs_dims = {'policy': 2, 'critic': 3}
    final_obs_groups: tuple[str, ...] = ()
    """Groups whose last observations of ended episodes step() reports (as RLEnv)."""

    def __init__(self, num_envs: int, episode_length: int = 24, random_init: bool = True,
                 dt_s: float = 0.1) -> None:
        """Allocate the state of num_envs point masses."""
        self.num_envs = num_envs
        self.episode_length = episode_length
        self.random_init = random_init
        self.dt_s = dt_s
        self.generator = torch.Generator().manual_seed(0)
        self.pos_m = torch.zeros(num_envs)
        self.vel_m_per_s = torch.zeros(num_envs)
        self.steps = torch.zeros(num_envs, dtype=torch.long)
        self.episode_return = torch.zeros(num_envs)

    def _reset_envs(self, ids: torch.Tensor) -> None:
        """Put the environments ids back to a start state."""
        if self.random_init:
            start = torch.rand(len(ids), generator=self.generator) * 4.0 - 2.0
        else:
            start = torch.linspace(-2.0, 2.0, self.num_envs)[ids]
        self.pos_m[ids] = start
        self.vel_m_per_s[ids] = 0.0
        self.steps[ids] = 0
        self.episode_return[ids] = 0.0

    def _obs(self) -> dict[str, torch.Tensor]:
        """Return the policy and critic observations."""
        policy = torch.stack([-self.pos_m, self.vel_m_per_s], dim=-1)
        phase = (self.steps.float() / self.episode_length).unsqueeze(-1)
        return {'policy': policy, 'critic': torch.cat([policy, phase], dim=-1)}

    def reset(self, seed: int | None = None) -> dict[str, torch.Tensor]:
        """Reset all environments, reseeding the start-state generator if seed is given."""
        if seed is not None:
            self.generator.manual_seed(seed)
        self._reset_envs(torch.arange(self.num_envs))
        return self._obs()

    def step(self, actions: torch.Tensor):
        """Integrate one step with the clipped force; auto-reset finished environments."""
        force = actions[:, 0].clamp(-1.0, 1.0)
        self.vel_m_per_s = 0.9 * self.vel_m_per_s + 2.0 * force * self.dt_s
        self.pos_m = self.pos_m + self.vel_m_per_s * self.dt_s
        self.steps += 1
        rewards = -self.pos_m.pow(2) - 0.01 * force.pow(2)
        self.episode_return += rewards
        terminated = self.pos_m.abs() > 3.0
        truncated = (self.steps >= self.episode_length) & ~terminated
        done = terminated | truncated
        extras = {}
        if done.any():
            extras['log'] = {
                'episode/return': self.episode_return[done].mean().item(),
                'episode/success': (self.pos_m[done].abs() < 0.2).float().mean().item(),
                'episode/length': self.steps[done].float().mean().item(),
            }
            if self.final_obs_groups:
                extras['final_obs_groups'] = self._obs()
            self._reset_envs(done.nonzero().squeeze(-1))
        return self._obs(), rewards, terminated, truncated, extras


def make_runner(tmp_path, env, max_iterations=30, save_interval=10, seed=1):
    """Return a small, fast runner on env writing to tmp_path."""
    ppo_cfg = PPOCfg(num_steps_per_env=24, num_mini_batches=4, num_learning_epochs=4,
                     policy=PolicyCfg(actor_hidden_dims=(32, 32), critic_hidden_dims=(32, 32)))
    runner_cfg = RunnerCfg(max_iterations=max_iterations, save_interval=save_interval,
                           seed=seed, progress_bar=False)
    return Runner(env, ppo_cfg, runner_cfg, tmp_path, {'task': 'point_mass'})


def params(runner):
    """Return the actor-critic state dict (parameters, log-std, normalizer buffers)."""
    return runner.algo.actor_critic.state_dict()


def assert_state_equal(a, b):
    """Assert two state dicts hold bit-identical tensors."""
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), key


@pytest.fixture(scope='module')
def trained(tmp_path_factory):
    """Train once on the random-start point mass: (runner, summary, run_dir)."""
    run_dir = tmp_path_factory.mktemp('trained')
    runner = make_runner(run_dir, PointMassEnv(64), max_iterations=20)
    return runner, runner.learn(), run_dir


def test_ppo_improves_mean_return(trained):
    """PPO raises the mean episode return well above the random initial policy's."""
    runner, summary, _ = trained
    returns = [e['episode/return'] for e in runner.history if 'episode/return' in e]
    first = sum(returns[:3]) / 3
    assert summary['final_return'] > first + 0.5 * abs(first), (first, summary['final_return'])
    successes = [e['episode/success'] for e in runner.history if 'episode/success' in e]
    assert summary['episode/success'] > successes[0] + 0.3
    assert summary['iterations'] == 20
    assert summary['env_steps'] == 20 * 64 * 24
    assert summary['steps_per_s'] > 0.0


def test_run_dir_artifacts(trained):
    """A run writes TensorBoard events, curves.png and weights_only checkpoints."""
    runner, _, run_dir = trained
    assert list((run_dir / 'tb').glob('events.out.tfevents.*'))
    assert (run_dir / 'curves.png').stat().st_size > 0
    assert [it for it, _ in list_checkpoints(run_dir)] == [10, 20]
    state = load_checkpoint(latest_checkpoint(run_dir))
    assert state['iteration'] == 20
    assert state['config'] == {'task': 'point_mass'}
    assert len(state['history']) == 20
    for key in ('train/surrogate_loss', 'train/value_loss', 'train/entropy',
                'train/approx_kl', 'train/clip_fraction', 'train/explained_variance',
                'train/learning_rate', 'train/action_std', 'perf/steps_per_s'):
        assert math.isfinite(state['history'][-1][key]), key
    for key in ('model', 'optimizer', 'learning_rate', 'env_steps', 'torch_rng_state',
                'generator_state'):
        assert key in state, key
    assert not list(run_dir.rglob('*.tmp'))


def test_tensorboard_holds_diagnostics_and_episode_stats(trained):
    """The TensorBoard events hold one point per iteration for PPO, perf and episode scalars."""
    event_accumulator = pytest.importorskip(
        'tensorboard.backend.event_processing.event_accumulator'
    )
    _, _, run_dir = trained
    events = event_accumulator.EventAccumulator(str(run_dir / 'tb'))
    events.Reload()
    tags = set(events.Tags()['scalars'])
    assert {'train/approx_kl', 'train/learning_rate', 'perf/steps_per_s', 'episode/return',
            'episode/success'} <= tags
    assert [e.step for e in events.Scalars('train/value_loss')] == list(range(1, 21))


def test_same_seed_gives_identical_results(tmp_path):
    """Two runs with the same seed produce identical returns and parameters."""
    runs = [make_runner(tmp_path / str(i), PointMassEnv(32), max_iterations=4) for i in (0, 1)]
    summaries = [run.learn() for run in runs]
    histories = [[e.get('episode/return') for e in run.history] for run in runs]
    assert histories[0] == histories[1]
    assert summaries[0]['final_return'] == summaries[1]['final_return']
    assert_state_equal(params(runs[0]), params(runs[1]))


def test_resume_matches_uninterrupted_run(tmp_path):
    """Stop after 3 iterations and resume to 6: parameters and history equal a 6-iteration run.

    The env has deterministic starts and episodes as long as a rollout, so its state at every
    iteration boundary equals a fresh reset and exact equality is expected.
    """
    full = make_runner(tmp_path / 'full', PointMassEnv(16, random_init=False), save_interval=3)
    full.learn(max_iterations=6)
    first = make_runner(tmp_path / 'split', PointMassEnv(16, random_init=False), save_interval=3)
    first.learn(max_iterations=3)
    resumed = make_runner(tmp_path / 'split', PointMassEnv(16, random_init=False),
                          save_interval=3)
    summary = resumed.learn(max_iterations=6, resume=True)
    assert summary['iterations'] == 6
    assert len(resumed.history) == 6
    assert_state_equal(params(full), params(resumed))
    for a, b in zip(full.history, resumed.history):
        assert a['train/value_loss'] == b['train/value_loss']
        assert a['episode/return'] == b['episode/return']


def test_max_seconds_stops_after_one_iteration_and_saves(tmp_path):
    """max_seconds=0 finishes the current iteration, then stops and checkpoints it."""
    runner = make_runner(tmp_path, PointMassEnv(8), max_iterations=100)
    summary = runner.learn(max_seconds=0.0)
    assert summary['iterations'] == 1
    assert latest_checkpoint(tmp_path).name == 'model_000001.pt'


def test_resume_without_checkpoint_starts_fresh(tmp_path):
    """resume=True in an empty run_dir trains from iteration 0."""
    runner = make_runner(tmp_path, PointMassEnv(8))
    assert runner.learn(max_iterations=1, resume=True)['iterations'] == 1


def test_policy_and_update_run_on_their_threads_and_the_env_on_its_own(tmp_path):
    """act_threads hold for the policy's forward passes, learn_threads for the update; the env
    steps on the collection setting (the simulation's threads keep the cores)."""
    env = PointMassEnv(8)
    runner = make_runner(tmp_path, env, max_iterations=1)
    runner.cfg.act_threads, runner.cfg.learn_threads = 2, 3
    seen = {'act': set(), 'step': set(), 'update': set()}
    for name, obj, attr in (('act', runner.algo, 'act'), ('step', env, 'step'),
                            ('update', runner.algo, 'update')):
        def spy(*args, _f=getattr(obj, attr), _name=name, **kwargs):
            seen[_name].add(torch.get_num_threads())
            return _f(*args, **kwargs)
        setattr(obj, attr, spy)
    torch.set_num_threads(1)
    runner.learn()
    assert seen == {'act': {2}, 'step': {1}, 'update': {3}}
    assert torch.get_num_threads() == 1


def test_importing_sim2real_shortens_the_openmp_spin_unless_set(tmp_path):
    """A fresh interpreter gets GOMP_SPINCOUNT=10000 from importing sim2real before torch; a
    value the user set is kept."""
    code = 'import os, sim2real, torch; print(os.environ["GOMP_SPINCOUNT"])'
    env = {k: v for k, v in os.environ.items() if k != 'GOMP_SPINCOUNT'}
    out = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ['10000']
    env['GOMP_SPINCOUNT'] = '5'
    out = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ['5']
