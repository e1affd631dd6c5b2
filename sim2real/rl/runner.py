"""On-policy training loop: rollouts, PPO updates, logging, checkpoints, resume."""

from __future__ import annotations

import contextlib
import logging
import math
import os
import time
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, TYPE_CHECKING

import torch
from tqdm import tqdm
from tqdm.contrib.logging import logging_redirect_tqdm

from sim2real.device import generator, get_rng_state, set_rng_state
from sim2real.rl.checkpoint import (
    CheckpointError, checkpoint_path, latest_checkpoint, load_checkpoint, plain_config,
    prune_checkpoints, save_checkpoint,
)
from sim2real.rl.curves import plot_curves
from sim2real.rl.env import VecEnv
from sim2real.rl.ppo import PPO, PPOCfg

if TYPE_CHECKING:
    from torch.utils.tensorboard import SummaryWriter

logger = logging.getLogger(__name__)

CHECKPOINT_FORMAT = 'sim2real.rl.checkpoint/1'
_REQUIRED_KEYS = ('model', 'optimizer', 'learning_rate', 'iteration', 'env_steps',
                  'torch_rng_state', 'generator_state', 'history')
_OWN_KEYS = ('iteration', 'env_steps')


@dataclass
class RunnerCfg:
    """Schedule of the on-policy training loop."""

    max_iterations: int = 1500
    """Total PPO iterations of the run (counted from iteration 0, also across resumes)."""
    save_interval: int = 50
    """Save a checkpoint and curves.png every this many iterations (and at the end)."""
    seed: int = 42
    """Seed of torch's global RNG (init, action noise) and of the minibatch generator."""
    log_interval: int = 1
    """Write TensorBoard scalars and a log line every this many iterations."""
    keep_checkpoints: int = 3
    """Keep only the newest this many checkpoints."""
    summary_window: int = 5
    """final_return averages the episode return over the last this many logged iterations."""
    progress_bar: bool = True
    """Show a tqdm progress bar."""
    learn_threads: int | None = None
    """torch threads during the PPO update (None: leave as set); collection keeps its own."""
    act_threads: int | None = None
    """torch threads for the policy's forward passes during collection (None: leave as set);
    the env steps on its own setting, so the simulation threads keep the cores to themselves."""


@contextlib.contextmanager
def torch_threads(num_threads: int | None):
    """Run the body on num_threads torch intra-op threads (None: as set), then restore."""
    if num_threads is None:
        yield
        return
    previous = torch.get_num_threads()
    torch.set_num_threads(num_threads)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


class OnPolicyRunner:
    """Train a PPO agent on a VecEnv (see sim2real.rl.env) and manage run_dir.

    run_dir receives tb/ (TensorBoard events), checkpoints/model_{iteration:06d}.pt and
    curves.png. Resuming restores model, optimizer, normalizers, learning rate, RNG states and
    the metric history, but not the environment: it is reset with seed + iteration, so a
    resumed run matches an uninterrupted one only if the env's state at that iteration
    boundary equals a fresh reset. torch's global RNG state is kept per runner between
    learn() calls and restored on entry, so interleaved runners stay reproducible.
    """

    def __init__(
        self, env: VecEnv, ppo_cfg: PPOCfg, runner_cfg: RunnerCfg, run_dir: str | os.PathLike,
        config_dict: dict | None = None,
    ) -> None:
        """Seed torch, build PPO for the env's observation and action sizes."""
        self.env = env
        self.cfg = runner_cfg
        self.run_dir = Path(run_dir)
        if config_dict is None:
            config_dict = {'ppo': asdict(ppo_cfg), 'runner': asdict(runner_cfg)}
        self.config = plain_config(config_dict)
        torch.manual_seed(runner_cfg.seed)
        self.device = getattr(env, 'device', torch.device('cpu'))
        self.generator = generator(self.device, runner_cfg.seed)
        self.ppo = PPO(env.obs_dims['policy'], env.obs_dims['critic'], env.num_actions,
                       env.num_envs, ppo_cfg, self.generator)
        self.iteration = 0
        self.env_steps = 0
        self.history: list[dict[str, float]] = []
        # torch's global RNG between learn() calls, so other code (or another runner) using it
        # in the meantime cannot change this run's action noise
        self.rng_state = get_rng_state(self.device)
        self._learning = False

    def state_dict(self) -> dict:
        """Return the full training state, loadable with weights_only=True."""
        return {
            'format': CHECKPOINT_FORMAT, **self.ppo.state_dict(),
            'iteration': self.iteration, 'env_steps': self.env_steps,
            'torch_rng_state': get_rng_state(self.device) if self._learning else self.rng_state,
            'generator_state': self.generator.get_state(),
            'config': self.config, 'history': self.history,
        }

    def save(self) -> Path:
        """Save a checkpoint for the current iteration, prune old ones, redraw curves.png."""
        path = save_checkpoint(checkpoint_path(self.run_dir, self.iteration), self.state_dict())
        prune_checkpoints(self.run_dir, self.cfg.keep_checkpoints)
        plot_curves(self.history, self.run_dir / 'curves.png')
        logger.info('saved %s', path)
        return path

    def load(self, path: str | os.PathLike) -> None:
        """Restore the training state from a checkpoint written by save()."""
        state = load_checkpoint(path)
        missing = [key for key in _REQUIRED_KEYS if key not in state]
        if missing:
            raise CheckpointError(f'checkpoint {path} lacks {missing}: not a runner checkpoint')
        self.ppo.load_state_dict(state)
        self.iteration = int(state['iteration'])
        self.env_steps = int(state['env_steps'])
        self.rng_state = state['torch_rng_state']
        self.generator.set_state(state['generator_state'])
        self.history = list(state['history'])
        logger.info('resumed from %s at iteration %d', path, self.iteration)

    def _collect(self, obs: dict[str, torch.Tensor]) -> tuple[dict, dict[str, float]]:
        """Run one rollout into PPO's storage; return the last obs and the episode stats.

        Each extras['log'] entry is averaged over the steps that reported it (each step's value
        being already a mean over the episodes that ended in it).
        """
        episode_logs: dict[str, list[float]] = defaultdict(list)
        for _ in range(self.ppo.cfg.num_steps_per_env):
            with torch_threads(self.cfg.act_threads):
                actions = self.ppo.act(obs['policy'], obs['critic'])
            obs, rewards, terminated, truncated, extras = self.env.step(actions)
            self.ppo.process_step(rewards, terminated | truncated, truncated & ~terminated)
            for key, value in extras.get('log', {}).items():
                episode_logs[key].append(float(value))
        self.ppo.compute_returns(obs['critic'])
        return obs, {key: sum(v) / len(v) for key, v in episode_logs.items()}

    def learn(
        self, max_iterations: int | None = None, max_seconds: float | None = None,
        resume: bool = False, stop_when: Callable[[dict], bool] | None = None,
    ) -> dict:
        """Train until max_iterations in total (default cfg) or max_seconds; return a summary.

        stop_when(entry) is called with each iteration's logged metrics; True ends training.

        With resume=True the newest checkpoint in run_dir is loaded first (none: start fresh).
        The wall-clock limit is checked after each iteration; a checkpoint is saved at the end.
        """
        if resume:
            path = latest_checkpoint(self.run_dir)
            if path is None:
                logger.warning('no checkpoint under %s; starting from scratch', self.run_dir)
            else:
                self.load(path)
        from torch.utils.tensorboard import SummaryWriter  # heavy import, only when training

        total = self.cfg.max_iterations if max_iterations is None else max_iterations
        start_s, start_steps = time.monotonic(), self.env_steps
        writer = SummaryWriter(str(self.run_dir / 'tb'), purge_step=self.iteration or None)
        bar = tqdm(total=total, initial=self.iteration, unit='it', desc='ppo',
                   disable=not self.cfg.progress_bar, dynamic_ncols=True)
        set_rng_state(self.rng_state, self.device)
        self._learning = True
        try:
            with logging_redirect_tqdm():
                self._train(total, start_s + max_seconds if max_seconds is not None else None,
                            writer, bar, stop_when)
        finally:
            self.rng_state = get_rng_state(self.device)
            self._learning = False
            bar.close()
            writer.close()
        wall_s = time.monotonic() - start_s
        return self._summary(wall_s, self.env_steps - start_steps)

    def _train(
        self, total: int, deadline_s: float | None, writer: SummaryWriter, bar: tqdm,
        stop_when: Callable[[dict], bool] | None = None,
    ) -> None:
        """Reset the env and run iterations until total or the monotonic deadline, then save."""
        batch_steps = self.env.num_envs * self.ppo.cfg.num_steps_per_env
        start_iteration, saved_at = self.iteration, None
        obs = self.env.reset(seed=self.cfg.seed + self.iteration)
        while self.iteration < total:
            tic = time.monotonic()
            obs, episode_stats = self._collect(obs)
            collect_s = time.monotonic() - tic
            metrics = self._update()
            learn_s = time.monotonic() - tic - collect_s
            self.iteration += 1
            self.env_steps += batch_steps
            entry = self._record(metrics, episode_stats, batch_steps, collect_s, learn_s)
            if self.iteration % self.cfg.log_interval == 0:
                self._log(writer, entry, total)
            bar.update(1)
            mean_return = entry.get('episode/return', math.nan)
            steps_per_s = entry['perf/steps_per_s']
            bar.set_postfix(ret=f'{mean_return:.2f}', sps=f'{steps_per_s:.0f}')
            if self.iteration % self.cfg.save_interval == 0:
                self.save()
                saved_at = self.iteration
            if deadline_s is not None and time.monotonic() >= deadline_s:
                logger.info('wall-clock limit reached after iteration %d', self.iteration)
                break
            if stop_when is not None and stop_when(entry):
                logger.info('stop condition met after iteration %d', self.iteration)
                break
        if self.iteration > start_iteration and saved_at != self.iteration:
            self.save()

    def _update(self) -> dict[str, float]:
        """PPO update, on learn_threads torch threads when configured."""
        with torch_threads(self.cfg.learn_threads):
            return self.ppo.update()

    def _record(
        self, metrics: dict[str, float], episode_stats: dict[str, float], batch_steps: int,
        collect_s: float, learn_s: float,
    ) -> dict[str, float]:
        """Append this iteration's metrics to the history and return the entry."""
        entry = {'iteration': self.iteration, 'env_steps': self.env_steps}
        entry.update({f'train/{key}': float(value) for key, value in metrics.items()})
        entry['perf/steps_per_s'] = batch_steps / max(collect_s + learn_s, 1e-9)
        entry['perf/collection_s'] = collect_s
        entry['perf/learn_s'] = learn_s
        entry.update(episode_stats)
        self.history.append(entry)
        return entry

    def _log(self, writer: SummaryWriter, entry: dict[str, float], total: int) -> None:
        """Write the entry's scalars to TensorBoard and one line to the logger."""
        for key, value in entry.items():
            if key != 'iteration':
                writer.add_scalar(key, value, self.iteration)
        logger.info(
            'iteration %d/%d  steps %d  return %.3f  kl %.4f  lr %.2e  sps %.0f',
            self.iteration, total, self.env_steps, entry.get('episode/return', math.nan),
            entry['train/approx_kl'], entry['train/learning_rate'], entry['perf/steps_per_s'],
        )

    def _summary(self, wall_s: float, steps_this_call: int) -> dict:
        """Return iterations, env_steps, wall_s, steps_per_s, final_return and episode stats."""
        returns = [e['episode/return'] for e in self.history if 'episode/return' in e]
        window = returns[-self.cfg.summary_window:]
        summary = {
            'iterations': self.iteration, 'env_steps': self.env_steps, 'wall_s': wall_s,
            'steps_per_s': steps_this_call / max(wall_s, 1e-9),
            'final_return': sum(window) / len(window) if window else None,
        }
        for entry in self.history:
            summary.update({k: v for k, v in entry.items() if k not in _OWN_KEYS
                            and not k.startswith(('train/', 'perf/'))})
        return summary
