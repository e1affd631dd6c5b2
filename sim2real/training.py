"""Train a registered task: env + algorithm runner + run-directory artefacts.

A run directory holds config.yaml (the resolved config), tb/ (TensorBoard), checkpoints/,
curves.png and, at the end, summary.json.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
import os
from pathlib import Path
from typing import Callable, Sequence

import torch
import yaml

from sim2real.algo_cfg import ALGORITHMS, TrainCfg
from sim2real.atomic import write_atomic
from sim2real.device import device_scope
from sim2real.focus import apply_focus, Focus, read_focus
from sim2real.contract import ObservationTermSpec
from sim2real.mdp.contract import contract_from_env, set_policy_layout
from sim2real.mdp.env import RLEnv
from sim2real.mdp.ranges import bias_edges
from sim2real.mdp.serialize import to_plain
from sim2real.overrides import apply_overrides, ConfigError, parse_assignment, split_by_root
from sim2real.rl import distributed
from sim2real.rl.checkpoint import latest_checkpoint, load_checkpoint
from sim2real.rl.runner import Runner, RunnerCfg
from sim2real.rl.warm_start import warm_start
from sim2real.tasks import get_task, make_env_cfg

log = logging.getLogger(__name__)

OVERRIDE_ROOTS = ('env', 'train', *ALGORITHMS)
"""What `--set` reaches: the task's env config, its training defaults and each algorithm's
config (`ppo.x` is `train.ppo.x`, `sac.x` is `train.sac.x`)."""
RUN_SHAPE = ('num_envs', 'seed', 'num_threads', 'backend', 'device')
"""Env fields that describe how a run was executed, not the task: a rebuilt env (export,
evaluation) takes its own."""
NOT_SETTABLE = {'corner_prob': 'train.corner_prob'}
SCHEDULE_FIELDS = ('num_envs', 'max_iterations', 'save_interval')
"""Run-shape fields an algorithm's config may set for itself (SACCfg); `train.X` sets them
for whichever algorithm runs."""
"""Env fields the training config owns: `--set` names the field to use instead."""


@dataclasses.dataclass
class TrainArgs:
    """What `sim2real train` was asked to do; stored in every checkpoint for --resume."""

    task: str
    """Registered task name."""
    seed: int = 0
    """Seed of the environment and the learner."""
    num_envs: int | None = None
    """Parallel environments (task default when None)."""
    max_iterations: int | None = None
    """Iterations (task default when None)."""
    max_seconds: float | None = None
    """Wall-clock budget [s] (task default when None)."""
    save_interval: int | None = None
    """Checkpoint every this many iterations (task default when None)."""
    action: str | None = None
    """Action interface (None: the task's default); the resolved kind is stored."""
    num_threads: int | None = None
    """Simulation threads (None or 0: all CPUs); on --resume, None keeps the run's."""
    backend: str = 'mujoco'
    """Simulation backend: 'mujoco' or 'mjwarp'."""
    device: str = 'cpu'
    """Simulation device: 'cpu', or 'cuda' with the mjwarp backend."""
    torch_threads: int = 1
    """torch intra-op threads; 1 avoids fighting the simulation threads for the cores."""
    init_from: str | None = None
    """Run directory or checkpoint whose policy this run starts from (see rl/warm_start.py)."""
    sets: list[str] = dataclasses.field(default_factory=list)
    """`--set root.path=value` overrides of the env, training and algorithm configs, in
    order."""
    algo: str | None = None
    """Algorithm (None: the task's default); the resolved name is stored."""
    workers: int = 0
    """Ray rollout workers, each stepping num_envs / workers envs (0: the envs step in the
    learner's process and Ray is not imported)."""
    ray_address: str | None = None
    """Ray cluster to join ('auto', host:port); None starts a local one."""


def build_env(task: str, seed: int, num_envs: int, action: str | None = None,
              play: bool = False, num_threads: int = 0, backend: str = 'mujoco',
              device: str = 'cpu', edge_prob: float = 0.0,
              edge_per_env: bool = False, corner_prob: float = 0.0,
              sets: Sequence[str] = (),
              observations: list[ObservationTermSpec] | None = None,
              focus: Focus | None = None) -> RLEnv:
    """A batched env of a registered task on a simulation backend and device; edge_prob > 0
    draws each box parameter at a bound of its range that often (training only: evaluation
    draws the box uniformly), edge_per_env all of an env's values of it together,
    corner_prob > 0 puts that share of the envs at a corner of the box for an episode; sets:
    `env.path=value` overrides of the task, applied to the task's config first (so that the
    edge bias wraps an overridden range), those of the run's shape (env count, seed, ...)
    last; observations: a contract's policy layout of the task's terms to observe instead
    of the task's own (`set_policy_layout`); focus: envs held at a robustness report's
    weakest points (`sim2real.focus`)."""
    cfg = task_env_cfg(task, sets, action, play)
    if observations is not None:
        set_policy_layout(cfg, observations)
    if edge_prob > 0.0 or corner_prob > 0.0:
        bias_edges(cfg, edge_prob, edge_per_env)
    cfg.corner_prob = corner_prob
    cfg.num_envs, cfg.seed, cfg.num_threads = num_envs, seed, num_threads
    cfg.backend, cfg.device = backend, device
    apply_overrides({'env': cfg}, [text for text in env_sets(sets)
                                   if parse_assignment(text)[0][1] in RUN_SHAPE])
    if focus is not None:
        apply_focus(cfg, focus)
    return RLEnv(cfg)


def env_sets(sets: Sequence[str]) -> list[str]:
    """The `env.` overrides of sets, in order; ConfigError for a field training owns."""
    out = split_by_root(sets, OVERRIDE_ROOTS)['env']
    for text in out:
        field_name = parse_assignment(text)[0][1]
        if field_name in NOT_SETTABLE:
            raise ConfigError(f'--set "{text}": set {NOT_SETTABLE[field_name]} instead')
    return out


def task_env_cfg(task: str, sets: Sequence[str], action: str | None = None,
                 play: bool = False):
    """The task's env config with the run's `env.` overrides of the task applied (not the
    run-shape fields); play: the play config, whose removed terms the overrides skip."""
    options = {} if action is None else {'action': action}
    cfg = make_env_cfg(task, play=play, **options)
    chosen = task_env_sets(sets)
    if play:   # play drops terms (disturbances) and noise: keep what still resolves
        chosen = [text for text in chosen if _resolves(cfg, text)]
    apply_overrides({'env': cfg}, chosen)
    return cfg


def _resolves(cfg, text: str) -> bool:
    """Whether an env override applies to cfg."""
    try:
        apply_overrides({'env': copy.deepcopy(cfg)}, [text])
    except ConfigError:
        return False
    return True


def task_env_sets(sets: Sequence[str]) -> list[str]:
    """The env overrides of a run that change the task (not its env count, seed, threads,
    backend or device): what an env rebuilt for export or evaluation applies."""
    return [text for text in env_sets(sets) if parse_assignment(text)[0][1] not in RUN_SHAPE]


def resolve_train_cfg(defaults: TrainCfg, sets: Sequence[str],
                      algo: str | None = None) -> TrainCfg:
    """A task's training defaults with the algorithm chosen (None: the task's) and the
    `train.` and algorithm overrides applied."""
    cfg = copy.deepcopy(defaults)
    if algo is not None:
        if algo not in ALGORITHMS:
            raise ConfigError(f'unknown algorithm "{algo}"; known: {", ".join(ALGORITHMS)}')
        cfg.algo = algo
    roots = ('train', *ALGORITHMS)
    chosen = [text for text in sets if parse_assignment(text)[0][0] in roots]
    split_by_root(sets, OVERRIDE_ROOTS)   # refuses an unknown root
    configs = {'train': cfg, **{name: getattr(cfg, name) for name in ALGORITHMS}}
    apply_overrides(configs, chosen)   # all or nothing, in the given order
    for text in chosen:   # the later of train.num_envs and sac.num_envs (...) wins
        (root, name, *rest), _ = parse_assignment(text)
        if root == 'train' and not rest and name in SCHEDULE_FIELDS:
            for algo in ALGORITHMS:
                if getattr(getattr(cfg, algo), name, None) is not None:
                    setattr(getattr(cfg, algo), name, None)
        elif root in ALGORITHMS and not rest and name in SCHEDULE_FIELDS:
            apply_overrides(configs, [text])
    return cfg


def check_request(task: str, sets: Sequence[str], action: str | None = None,
                  algo: str | None = None) -> None:
    """Refuse, before anything is built or written, an action the task does not have, and
    overrides that name no field of its env, training or PPO config or carry a value of the
    wrong type."""
    spec = get_task(task)
    if action is not None and action not in spec.actions:
        raise ValueError(f'task "{task}" has no action "{action}"; its actions: '
                         f'{", ".join(spec.actions)}')
    resolve_train_cfg(spec.train, sets, algo)
    cfg = task_env_cfg(task, sets, action)
    apply_overrides({'env': cfg}, [text for text in env_sets(sets)
                                   if parse_assignment(text)[0][1] in RUN_SHAPE])


def edge_options(train_cfg: TrainCfg) -> dict:
    """build_env's edge-bias and focus arguments from a task's training config (the focus
    report read here, so that Ray workers elsewhere get its points)."""
    return {'edge_prob': train_cfg.edge_prob, 'edge_per_env': train_cfg.edge_per_env,
            'corner_prob': train_cfg.corner_prob, 'focus': read_focus(train_cfg)}


def resolve_args(args: TrainArgs, run_dir: Path, resume: bool) -> TrainArgs:
    """On resume, the arguments of the run being continued, with any new limits applied."""
    if not resume:
        return args
    path = latest_checkpoint(run_dir)
    if path is None:
        return args
    stored = TrainArgs(**load_checkpoint(path)['config']['args'])
    if stored.task != args.task:
        raise ValueError(f'{run_dir} holds a run of "{stored.task}", not "{args.task}"')
    stored.algo = stored.algo or 'ppo'   # runs from before the algorithm seam are PPO's
    if args.algo is not None and args.algo != stored.algo:
        raise ValueError(f'{run_dir} holds a {stored.algo} run; a resumed run keeps its '
                         'algorithm')
    if args.sets and list(args.sets) != list(stored.sets):
        raise ValueError(f'{run_dir}: a resumed run keeps the overrides it started with '
                         f'({stored.sets or "none"}); drop --set or start a new run')
    for name in ('max_iterations', 'max_seconds', 'save_interval'):
        if getattr(args, name) is not None:
            setattr(stored, name, getattr(args, name))
    if args.num_threads is not None:   # threads are where it runs now, as the Ray placement
        stored.num_threads = args.num_threads
    stored.workers, stored.ray_address = args.workers, args.ray_address   # where it runs now
    return stored


def _ray_workers(args: TrainArgs, train_cfg: TrainCfg, num_envs: int):
    """The sizes of the run's env, a RaySampler of args.workers workers, each building
    num_envs / workers envs of the task on one simulation thread, and a one-env instance
    of the task (its config and action describe the run)."""
    from functools import partial
    from sim2real.rl.env import EnvSpec
    from sim2real.rl.ray_sampler import RaySampler   # Ray only when workers are asked for
    if args.device != 'cpu':
        raise ConfigError(f'--workers runs the envs on the CPU; --device {args.device} is '
                          'for in-process training')
    shape = [text for text in env_sets(args.sets)
             if parse_assignment(text)[0][1] in ('num_envs', 'seed')]
    if shape:
        raise ConfigError(f'--set {shape[0]}: with --workers use --num-envs and --seed')
    if num_envs % args.workers:
        raise ConfigError(f'{num_envs} envs do not split over {args.workers} workers; pick '
                          'a multiple (--num-envs)')
    per_worker = num_envs // args.workers
    make_env = partial(build_env, args.task, num_envs=per_worker, action=args.action,
                       num_threads=1, backend=args.backend, device=args.device,
                       sets=args.sets, **edge_options(train_cfg))
    probe = build_env(args.task, args.seed, 1, args.action, num_threads=1, sets=args.sets)
    spec = EnvSpec(num_envs, probe.num_actions, dict(probe.obs_dims))
    sampler = RaySampler(make_env, args.workers, train_cfg.algo_cfg,
                         train_cfg.algo_cfg.rollout_steps, args.seed, address=args.ray_address)
    return spec, sampler, probe


def run_config(args: TrainArgs, env: RLEnv, train_cfg: TrainCfg,
               runner_cfg: RunnerCfg, num_envs: int | None = None) -> dict:
    """The resolved configuration of a run, as config.yaml and every checkpoint hold it
    (num_envs: all the run's envs, when env is a one-env instance describing them)."""
    return {'args': dataclasses.asdict(args), 'num_envs': num_envs or env.num_envs,
            'algo': train_cfg.algo, 'algo_cfg': to_plain(train_cfg.algo_cfg),
            'train': to_plain(train_cfg), 'runner': to_plain(runner_cfg),
            'obs_dims': env.obs_dims, 'num_actions': env.num_actions,
            'env': to_plain(env.cfg)}


def train(args: TrainArgs, run_dir: str | os.PathLike, resume: bool = False,
          progress_bar: bool = True, stop_when: Callable[[dict], bool] | None = None) -> dict:
    """Train, writing config.yaml, checkpoints, curves and summary.json; returns the summary.

    Started by torchrun (RANK and WORLD_SIZE set, more than one rank), each rank trains a
    replica on its own num_envs envs (sim2real.rl.distributed) and rank 0 writes the run
    directory; a worker torchrun restarted in-job resumes from the last checkpoint.
    """
    info = distributed.launched_by_torchrun()
    if info is None:
        return _train(args, Path(run_dir), resume, progress_bar, stop_when)
    if args.workers:
        raise ConfigError('--workers (Ray rollout workers) and torchrun ranks do not combine '
                          'yet: use one or the other')
    if int(os.environ.get('TORCHELASTIC_RESTART_COUNT', '0')) > 0 and not resume:
        log.warning('torchrun restarted this job (restart %s): resuming from the last '
                    'checkpoint', os.environ['TORCHELASTIC_RESTART_COUNT'])
        resume = True
    created = distributed.init_process_group(info, args.device)
    try:
        summary = _train(args, Path(run_dir), resume, progress_bar and info.is_main,
                         stop_when, info)
        # every rank done before any tears the group down: a rank that destroyed it while
        # another was still in its last collective aborted that one (std::terminate)
        distributed.barrier()
        return summary
    finally:
        if created:
            distributed.destroy()


def _train(args: TrainArgs, run_dir: Path, resume: bool, progress_bar: bool,
           stop_when: Callable[[dict], bool] | None,
           info: distributed.RankInfo = distributed.RankInfo()) -> dict:
    """train() in this process, as one rank of info.world_size."""
    run_dir.mkdir(parents=True, exist_ok=True)
    if info.world_size > 1:   # rank 0's reading of the run being resumed holds for all
        asked = args.device
        args = distributed.broadcast_from_main(
            resolve_args(args, run_dir, resume) if info.is_main else None)
        if args.device.split(':')[0] != asked.split(':')[0]:
            raise ConfigError(f'{run_dir} holds a run on --device {args.device}: resume it '
                              'with the same --device (it picks the backend of the ranks)')
        owned = [text for text in env_sets(args.sets)
                 if parse_assignment(text)[0][1] in ('seed', 'device')]
        if owned:
            raise ConfigError(f'--set {owned[0]}: under torchrun use --seed and --device '
                              '(each rank seeds its envs apart)')
    else:
        args = resolve_args(args, run_dir, resume)
    spec = get_task(args.task)
    torch.set_num_threads(args.torch_threads)
    train_cfg = resolve_train_cfg(spec.train, args.sets, args.algo)
    num_envs = args.num_envs or train_cfg.schedule('num_envs')
    seed = args.seed + info.rank * distributed.RANK_SEED_STRIDE   # rank 0: the run's seed
    device = (f'cuda:{info.local_rank}' if args.device == 'cuda' and info.world_size > 1
              else args.device)   # each rank on its own GPU
    learn_threads, act_threads = train_cfg.learn_threads, train_cfg.act_threads
    cores = distributed.cores_per_rank()   # the ranks on this machine share its cores
    if info.world_size > 1:
        learn_threads, act_threads = (None if n is None else min(n, cores)
                                      for n in (learn_threads, act_threads))
    sampler = probe = None
    if args.workers:
        env, sampler, probe = _ray_workers(args, train_cfg, num_envs)
    else:
        env = build_env(args.task, seed, num_envs, args.action,
                        num_threads=args.num_threads or (cores if info.world_size > 1 else 0),
                        backend=args.backend,
                        device=device, sets=args.sets, **edge_options(train_cfg))
    num_envs = env.num_envs
    described = env if probe is None else probe   # the env config the run records
    args = dataclasses.replace(args, action=described.action_term.kind, algo=train_cfg.algo)
    max_iterations = args.max_iterations or train_cfg.schedule('max_iterations')
    max_seconds = args.max_seconds if args.max_seconds is not None else train_cfg.max_seconds
    runner_cfg = RunnerCfg(max_iterations=max_iterations, seed=seed,
                           save_interval=args.save_interval
                           or train_cfg.schedule('save_interval'),
                           log_interval=getattr(train_cfg.algo_cfg, 'log_interval', 1),
                           progress_bar=progress_bar,
                           learn_threads=learn_threads, act_threads=act_threads)
    config = run_config(args, described, train_cfg, runner_cfg, num_envs)
    with device_scope(env.device):   # the learner's networks and buffers beside the env's
        runner = Runner(env, train_cfg.algo_cfg, runner_cfg, run_dir, config, sampler)
        # rank 0 decides and reads the file; the other ranks take its weights
        warm = bool(args.init_from) and not (resume and latest_checkpoint(run_dir))
        if distributed.broadcast_from_main(warm):
            if info.is_main:
                onnx = str(args.init_from).endswith('.onnx')   # checked against our contract
                warm_start(runner.algo.network, args.init_from, runner.config,
                           contract_from_env(described) if onnx else None)
            distributed.broadcast_module(runner.algo.network)
        if info.is_main:
            (run_dir / 'config.yaml').write_text(yaml.safe_dump(config, sort_keys=False))
        try:
            result = runner.learn(max_iterations=max_iterations, max_seconds=max_seconds,
                                  resume=resume, stop_when=stop_when)
        finally:
            if sampler is not None:
                sampler.close()
    summary = {'task': args.task, 'algo': train_cfg.algo, 'workers': args.workers,
               'ranks': info.world_size, 'seed': args.seed, 'backend': args.backend,
               'device': args.device,
               'action': args.action, 'num_envs': num_envs * info.world_size, **result,
               'torch_threads': torch.get_num_threads()}
    if not info.is_main:
        return summary
    write_atomic(run_dir / 'summary.json', json.dumps(summary, indent=2, sort_keys=True))
    return summary
