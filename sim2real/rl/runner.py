"""Training loop of every algorithm: rollouts, updates, logging, checkpoints, resume."""

from __future__ import annotations

import logging
import math
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, TYPE_CHECKING

import torch
from tqdm import tqdm
from tqdm.contrib.logging import logging_redirect_tqdm

from sim2real.device import generator, get_rng_state, set_rng_state, tree_to
from sim2real.rl.checkpoint import (
    CheckpointError, checkpoint_path, latest_checkpoint, load_checkpoint, plain_config,
    prune_checkpoints, save_checkpoint,
)
from sim2real.rl.algorithm import Algorithm
from sim2real.rl.algorithms import AlgorithmCfg, algorithm_name, build_algorithm
from sim2real.rl.collector import Collector, torch_threads
from sim2real.rl.curves import plot_curves
from sim2real.rl import distributed
from sim2real.rl.env import VecEnv
from sim2real.rl.interrupt import deferred_sigint, StopRequest
from sim2real.sim.state import StateError

if TYPE_CHECKING:
    from torch.utils.tensorboard import SummaryWriter

logger = logging.getLogger(__name__)

CHECKPOINT_FORMAT = 'sim2real.rl.checkpoint/2'
"""/2 adds env_state (absent where the env has no state protocol) and segments; a torchrun
job's checkpoints add 'ranks', each rank's RNG and env states (rank 0's also at the top)."""
_REQUIRED_KEYS = ('iteration', 'env_steps', 'torch_rng_state', 'generator_state', 'history')
_OWN_KEYS = ('iteration', 'env_steps')


@dataclass
class RunnerCfg:
    """Schedule of the training loop."""

    max_iterations: int = 1500
    """Total iterations of the run, a rollout and an update each (counted from iteration 0,
    also across resumes)."""
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
    """torch threads during the update (None: leave as set); collection keeps its own."""
    act_threads: int | None = None
    """torch threads for the policy's forward passes during collection (None: leave as set);
    the env steps on its own setting, so the simulation threads keep the cores to themselves."""


def has_state_protocol(env) -> bool:
    """Whether env can save and restore its state (state_dict, load_state_dict,
    get_observations), so that a resumed run continues its episodes."""
    return all(callable(getattr(env, name, None))
               for name in ('state_dict', 'load_state_dict', 'get_observations'))


class Runner:
    """Train an algorithm (sim2real.rl.algorithm) on a VecEnv (sim2real.rl.env) and manage
    run_dir.

    run_dir receives tb/ (TensorBoard events), checkpoints/model_{iteration:06d}.pt and
    curves.png. A checkpoint holds model, optimizer, normalizers, learning rate, RNG states,
    the metric history, the wall-clock segments and, when the env has the state protocol
    (state_dict, load_state_dict, get_observations; RLEnv has it), the env's full state at
    that iteration boundary. Resuming from it continues the episodes in flight, so a run
    killed at any moment and resumed ends bit-identical to the uninterrupted run of the same
    seed on the same machine, wherever the simulation is deterministic (mujoco; mjwarp on
    Warp's CPU device, not on CUDA). Without env state (an env without the protocol or with
    a component that cannot give its state, or a checkpoint older than format /2) the env
    is reset with seed + iteration instead, which a warning says is not an exact
    continuation. A second learn() call continues the
    episodes too. torch's global RNG state is kept per runner between learn() calls and
    restored on entry, so interleaved runners stay reproducible.
    """

    def __init__(
        self, env: VecEnv, algo_cfg: AlgorithmCfg, runner_cfg: RunnerCfg,
        run_dir: str | os.PathLike, config_dict: dict | None = None, sampler=None,
    ) -> None:
        """Seed torch, build the algorithm algo_cfg configures for the env's sizes.

        sampler: collects elsewhere (sim2real.rl.ray_sampler.RaySampler, collect(algo) ->
        (env steps, episode stats)); env then only describes the sizes (rl.env.EnvSpec) and
        checkpoints hold no env state: a resumed run starts new episodes.
        """
        self.env = env
        self.cfg = runner_cfg
        self.run_dir = Path(run_dir)
        if config_dict is None:
            config_dict = {'algo': algorithm_name(algo_cfg), 'algo_cfg': asdict(algo_cfg),
                           'runner': asdict(runner_cfg)}
        self.config = plain_config(config_dict)
        torch.manual_seed(runner_cfg.seed)
        self.device = getattr(env, 'device', torch.device('cpu'))
        self.generator = generator(self.device, runner_cfg.seed)
        self.algo: Algorithm = build_algorithm(algo_cfg, env, self.generator)
        distributed.broadcast_module(self.algo.network)   # under torchrun: rank 0's init
        self.ranks = distributed.world_size()
        self.is_main = distributed.rank() == 0
        self.collector = Collector(env, runner_cfg.act_threads)
        self.sampler = sampler
        self.iteration = 0
        self.env_steps = 0
        self.history: list[dict[str, float]] = []
        self.segments: list[dict] = []
        """Finished stretches of training: start_iteration, end_iteration, wall_s [s]."""
        self._segment: tuple[int, float] | None = None   # (start iteration, monotonic s)
        self._obs: dict[str, torch.Tensor] | None = None   # the env's at the last boundary
        self._env_state_error = ''   # why the env cannot give its state (warned once)
        # torch's global RNG between learn() calls, so other code (or another runner) using it
        # in the meantime cannot change this run's action noise
        self.rng_state = get_rng_state(self.device)
        self._learning = False
        self.interrupted = False
        """Whether the last learn() stopped early on Ctrl-C (after saving)."""

    def state_dict(self) -> dict | None:
        """Return the full training state, loadable with weights_only=True.

        Under torchrun every rank must call it: 'ranks' then holds each rank's own part
        (env state, torch RNG and minibatch generator states; rank_state()), gathered on
        rank 0, whose part is also at the top level. The other ranks get None.
        """
        own = self.rank_state()
        parts = distributed.gather_to_main(tree_to(own, 'cpu') if self.ranks > 1 else own)
        if not self.is_main:
            return None
        state = {
            'format': CHECKPOINT_FORMAT, 'algo': self.algo.name, **self.algo.state_dict(),
            'iteration': self.iteration, 'env_steps': self.env_steps,
            **own, 'config': self.config, 'history': self.history,
            'segments': self._all_segments(),
        }
        if self.ranks > 1:
            state['ranks'] = parts
        return state

    def rank_state(self) -> dict:
        """What differs between the ranks of a torchrun job: RNG states and env state."""
        own = {'torch_rng_state': (get_rng_state(self.device) if self._learning
                                   else self.rng_state),
               'generator_state': self.generator.get_state()}
        env_state = self._env_state()
        if env_state is not None:
            own['env_state'] = env_state
        return own

    def _env_state(self) -> dict | None:
        """The env's state, or None (warned once) when the env or one of its components
        cannot give one: the checkpoint is still written, and a resume resets the envs."""
        if not has_state_protocol(self.env) or self._env_state_error:
            return None
        try:
            return self.env.state_dict()
        except StateError as exc:
            self._env_state_error = str(exc)
            logger.warning('checkpoints hold no env state, so a resume will restart the '
                           'episodes instead of continuing them exactly: %s', exc)
            return None

    def _all_segments(self) -> list[dict]:
        """The finished segments and, while learning, the current one up to now."""
        segments = [dict(s) for s in self.segments]
        if self._segment is not None and self.iteration > self._segment[0]:
            segments.append({'start_iteration': self._segment[0],
                             'end_iteration': self.iteration,
                             'wall_s': time.monotonic() - self._segment[1]})
        return segments

    def save(self) -> Path | None:
        """Save a checkpoint for the current iteration, prune old ones, redraw curves.png
        (under torchrun: every rank calls it, rank 0 writes and returns the path)."""
        state = self.state_dict()
        if state is None:
            return None
        path = save_checkpoint(checkpoint_path(self.run_dir, self.iteration), state)
        prune_checkpoints(self.run_dir, self.cfg.keep_checkpoints)
        plot_curves(self.history, self.run_dir / 'curves.png')
        logger.info('saved %s', path)
        return path

    def load(self, path: str | os.PathLike, state: dict | None = None) -> None:
        """Restore the training state from a checkpoint written by save() (state: its
        contents, already loaded; under torchrun each rank takes its own part)."""
        if state is None:
            state = load_checkpoint(path)
        state = self._own_part(state, path)
        algo = state.get('algo', 'ppo')   # checkpoints before the algorithm seam are PPO's
        if algo != self.algo.name:
            raise CheckpointError(f'checkpoint {path} was written by {algo}, not '
                                  f'{self.algo.name}')
        missing = [key for key in (*_REQUIRED_KEYS, *self.algo.state_keys) if key not in state]
        if missing:
            raise CheckpointError(f'checkpoint {path} lacks {missing}: not a runner checkpoint')
        self.algo.load_state_dict(state)
        self.iteration = int(state['iteration'])
        self.env_steps = int(state['env_steps'])
        self.rng_state = state['torch_rng_state']
        self.generator.set_state(state['generator_state'])
        self.history = list(state['history'])
        self.segments = [dict(s) for s in state.get('segments', [])]
        self._obs = self._load_env_state(state, path)
        logger.info('resumed from %s at iteration %d', path, self.iteration)

    def _own_part(self, state: dict, path) -> dict:
        """state with this rank's RNG and env states at the top level (rank 0's are there
        already); a rank the checkpoint has no part for keeps its seeds and resets its envs."""
        parts = state.get('ranks')
        rank = distributed.rank()
        if parts is not None and len(parts) != self.ranks:
            logger.warning('%s was written by %d ranks, this job has %d: ranks without a '
                           'part restart their episodes, so the run is not an exact '
                           'continuation', path, len(parts), self.ranks)
        if rank == 0:
            return state
        state = {key: value for key, value in state.items()
                 if key not in ('torch_rng_state', 'generator_state', 'env_state')}
        if parts is not None and rank < len(parts):
            state.update(parts[rank])
        else:
            state.update(torch_rng_state=self.rng_state,
                         generator_state=self.generator.get_state())
        return state

    def _load_env_state(self, state: dict, path) -> dict[str, torch.Tensor] | None:
        """Restore the env's state from a checkpoint; its observations, or None (warned)
        when the checkpoint or the env has no env state and the env will be reset."""
        if 'env_state' not in state:
            why = ('saved without it, or its env had no state protocol' if 'segments' in state else
                   f'format {state.get("format")}, older than exact resume; the wall time '
                   'before it is not known')
            logger.warning('%s holds no env state (%s): the envs restart their episodes '
                           '(reset with seed + iteration), so the run will not end exactly '
                           'where an uninterrupted one would', path, why)
            return None
        if not has_state_protocol(self.env):
            logger.warning('%s holds env state, but %s cannot load it: the envs are reset '
                           'with seed + iteration', path, type(self.env).__name__)
            return None
        try:
            self.env.load_state_dict(state['env_state'])
        except StateError as exc:
            raise StateError(f'checkpoint {path}: {exc}') from exc
        return self.env.get_observations()

    def learn(
        self, max_iterations: int | None = None, max_seconds: float | None = None,
        resume: bool = False, stop_when: Callable[[dict], bool] | None = None,
    ) -> dict:
        """Train until max_iterations in total (default cfg) or max_seconds; return a summary.

        stop_when(entry) is called with each iteration's logged metrics; True ends training.

        With resume=True the newest checkpoint in run_dir is loaded first (none: start fresh)
        and the env continues from its saved state (see the class docstring).
        The wall-clock limit is checked after each iteration; a checkpoint is saved at the end.
        The summary's wall_s and steps_per_s cover every segment of the run (each learn()
        call, resumed or not, up to its last checkpoint when it was killed).
        """
        if resume:
            self._resume()
        from torch.utils.tensorboard import SummaryWriter  # heavy import, only when training

        total = self.cfg.max_iterations if max_iterations is None else max_iterations
        self._segment = (self.iteration, time.monotonic())
        deadline_s = None if max_seconds is None else self._segment[1] + max_seconds
        # purge only what a killed run logged after this checkpoint: steps > iteration
        writer = (SummaryWriter(str(self.run_dir / 'tb'),
                                purge_step=self.iteration + 1 if self.iteration else None)
                  if self.is_main else None)
        bar = tqdm(total=total, initial=self.iteration, unit='it', desc=self.algo.name,
                   disable=not (self.cfg.progress_bar and self.is_main), dynamic_ncols=True)
        set_rng_state(self.rng_state, self.device)
        self._learning = True
        try:
            with logging_redirect_tqdm(), deferred_sigint() as interrupt:
                self._train(total, deadline_s, writer, bar, stop_when, interrupt)
        finally:
            self.rng_state = get_rng_state(self.device)
            self._learning = False
            bar.close()
            if writer is not None:
                writer.close()
            self.segments = self._all_segments()
            self._segment = None
        return self._summary()

    def _resume(self) -> None:
        """Load the newest checkpoint of run_dir (rank 0 reads it and sends it to the other
        ranks, so they need no shared file system); none: start fresh."""
        path = latest_checkpoint(self.run_dir) if self.is_main else None
        state = load_checkpoint(path) if path is not None and self.ranks > 1 else None
        path, state = distributed.broadcast_from_main((path, state))
        if path is None:
            logger.warning('no checkpoint under %s; starting from scratch', self.run_dir)
        else:
            self.load(path, state)

    def _train(
        self, total: int, deadline_s: float | None, writer: SummaryWriter | None, bar: tqdm,
        stop_when: Callable[[dict], bool] | None = None,
        interrupt: StopRequest | None = None,
    ) -> None:
        """Run iterations until total, the monotonic deadline or an interrupt request (Ctrl-C,
        checked between iterations), then save; the env continues from the last boundary
        (resumed or in this process), else it is reset."""
        batch_steps = self.env.num_envs * self.algo.rollout_steps * self.ranks
        start_iteration, saved_at = self.iteration, None
        obs = None
        if self.sampler is not None:   # the workers own their envs
            self.sampler.start(self.iteration)
        elif self._obs is None or not has_state_protocol(self.env):
            obs = self.env.reset(seed=self.cfg.seed + self.iteration)
            self.algo.episodes_restarted()
        else:   # the env's own observations, had anything stepped or reset it since
            obs = self.env.get_observations()
        while self.iteration < total:
            tic = time.monotonic()
            if self.sampler is not None:
                batch_steps, episode_stats = self.sampler.collect(self.algo)
                batch_steps *= self.ranks
            else:
                self._obs = None   # the env leaves the boundary
                self.collector.act_threads = self.cfg.act_threads
                obs, episode_stats = self.collector.collect(self.algo, obs)
                self._obs = obs
            episode_stats = distributed.pooled_stats(episode_stats)   # every rank's episodes
            collect_s = time.monotonic() - tic
            metrics = self._update()
            learn_s = time.monotonic() - tic - collect_s
            self.iteration += 1
            self.env_steps += batch_steps
            entry = self._record(metrics, episode_stats, batch_steps, collect_s, learn_s)
            if self.iteration % self.cfg.log_interval == 0 and writer is not None:
                self._log(writer, entry, total)
            bar.update(1)
            bar.set_postfix(ret=_figure(entry.get('episode/return'), '.2f'),
                            sps=f'{entry["perf/steps_per_s"]:.0f}')
            if self.iteration % self.cfg.save_interval == 0:
                self.save()
                saved_at = self.iteration
            # every rank must take the same branch: stop when any rank would
            if distributed.any_rank(deadline_s is not None and time.monotonic() >= deadline_s):
                logger.info('wall-clock limit reached after iteration %d', self.iteration)
                break
            if distributed.any_rank(stop_when is not None and stop_when(entry)):
                logger.info('stop condition met after iteration %d', self.iteration)
                break
            if distributed.any_rank(interrupt is not None and interrupt.requested):
                self.interrupted = True
                break
        if self.iteration > start_iteration and saved_at != self.iteration:
            self.save()

    def _update(self) -> dict[str, float]:
        """The algorithm's update, on learn_threads torch threads when configured."""
        with torch_threads(self.cfg.learn_threads):
            return self.algo.update()

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
        shown = '  '.join(f'{key} {_figure(entry.get(f"train/{key}"), ".4g")}'
                          for key in self.algo.log_keys)
        logger.info('iteration %d/%d  steps %d  return %s  %s  sps %.0f', self.iteration,
                    total, self.env_steps, _figure(entry.get('episode/return'), '.3f'), shown,
                    entry['perf/steps_per_s'])

    def _summary(self) -> dict:
        """Return iterations, env_steps, wall_s and steps_per_s over all segments, the
        segments, final_return and the last episode statistics."""
        returns = [e['episode/return'] for e in self.history if 'episode/return' in e]
        window = returns[-self.cfg.summary_window:]
        wall_s = sum(s['wall_s'] for s in self.segments)
        iterations = sum(s['end_iteration'] - s['start_iteration'] for s in self.segments)
        batch_steps = self.env.num_envs * self.algo.rollout_steps * self.ranks
        summary = {
            'iterations': self.iteration, 'env_steps': self.env_steps, 'wall_s': wall_s,
            'steps_per_s': iterations * batch_steps / max(wall_s, 1e-9),
            'segments': [dict(s) for s in self.segments],
            'final_return': sum(window) / len(window) if window else None,
            'interrupted': self.interrupted,
        }
        for entry in self.history:
            summary.update({k: v for k, v in entry.items() if k not in _OWN_KEYS
                            and not k.startswith(('train/', 'perf/'))})
        return summary


def _figure(value: float | None, spec: str) -> str:
    """value formatted, or '-' while it has no sample (no episode ended in the window yet)."""
    if value is None or not math.isfinite(value):
        return '-'
    return format(value, spec)
