"""Run under torchrun by test_rl_ddp.py: one rank's view of data-parallel training.

Each rank writes OUT/rank{R}.pt with
- its normalizer statistics after two updates with its own batches, and both ranks' batches
  (to check that the merged statistics equal those of one normalizer fed all the data);
- the algorithm state (model, optimizers) after a few PPO and SAC iterations on its own
  quadrotor-hover envs, and the observations its envs ended at (they must differ by rank).
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

from sim2real.rl import distributed
from sim2real.rl.normalizer import EmpiricalNormalizer
from sim2real.rl.runner import Runner, RunnerCfg
from sim2real.tasks import get_task
from sim2real.training import build_env, resolve_train_cfg


def normalizer_probe(rank: int) -> dict:
    """Two pooled updates from rank-specific batches of different scales and sizes."""
    gen = torch.Generator().manual_seed(100 + rank)
    norm = EmpiricalNormalizer(3)
    batches = [torch.randn(5 + 3 * rank, 3, generator=gen) * (1 + rank) + rank
               for _ in range(2)]
    for batch in batches:
        norm.update(batch)
    return {'norm_mean': norm.mean.clone(), 'norm_var': norm.var.clone(),
            'norm_count': norm.count.clone(), 'batches': batches}


def train_probe(algo: str, rank: int, run_dir: Path) -> dict:
    """A few iterations of algo on 16 hover envs seeded for this rank."""
    seed = 5 + rank * distributed.RANK_SEED_STRIDE
    env = build_env('quadrotor-hover', seed, 16, num_threads=1)
    sets = ['sac.learning_starts=64', 'sac.batch_size=64'] if algo == 'sac' else []
    cfg = resolve_train_cfg(get_task('quadrotor-hover').train, sets, algo)
    runner = Runner(env, cfg.algo_cfg, RunnerCfg(max_iterations=3 if algo == 'ppo' else 12,
                                                 seed=seed, progress_bar=False,
                                                 save_interval=1000), run_dir / algo)
    runner.learn()
    return {f'{algo}_state': runner.algo.state_dict(),
            f'{algo}_obs': env.get_observations()['policy'].clone(),
            f'{algo}_env_steps': runner.env_steps}


def main(out: str) -> None:
    """Join the process group, probe, write this rank's file."""
    info = distributed.launched_by_torchrun()
    assert info is not None, 'run me with torchrun --nproc-per-node 2'
    torch.set_num_threads(1)
    distributed.init_process_group(info, 'cpu')
    result = normalizer_probe(info.rank)
    for algo in ('ppo', 'sac'):
        result.update(train_probe(algo, info.rank, Path(out)))
    torch.save(result, Path(out) / f'rank{info.rank}.pt')
    distributed.destroy()


if __name__ == '__main__':
    main(sys.argv[1])
