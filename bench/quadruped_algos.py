"""PPO against SAC on quadruped-flat at equal wall clock.

Each algorithm trains the task with its defaults (`sim2real train quadruped-flat --algo A`)
for the same wall-clock budget on this machine; its deterministic policy is then evaluated on
128 episodes under full randomization, as `sim2real eval` does (evaluation time not counted):
lin_vel_error_mps and fall_rate. A flat-ground policy takes hours here, so at a budget of
minutes this compares how far each gets, not where each ends.
"""

from __future__ import annotations

import copy
import tempfile

from bench.common import report
from sim2real.device import device_scope
from sim2real.evaluate import rollout_episodes
from sim2real.rl.runner import Runner, RunnerCfg
from sim2real.tasks import get_task
from sim2real.training import build_env, edge_options

TASK = 'quadruped-flat'


def train_for(algo: str, budget_s: float, seed: int = 0, episodes: int = 128) -> dict:
    """Train TASK with algo's defaults for budget_s seconds; the evaluated metrics."""
    train = copy.deepcopy(get_task(TASK).train)
    train.algo = algo
    env = build_env(TASK, seed, train.schedule('num_envs'), **edge_options(train))
    runner_cfg = RunnerCfg(max_iterations=10 ** 7, seed=seed, save_interval=10 ** 7,
                           log_interval=getattr(train.algo_cfg, 'log_interval', 1),
                           progress_bar=False, learn_threads=train.learn_threads,
                           act_threads=train.act_threads)
    with tempfile.TemporaryDirectory() as run_dir, device_scope(env.device):
        runner = Runner(env, train.algo_cfg, runner_cfg, run_dir)
        summary = runner.learn(max_seconds=budget_s)
        evaluation = build_env(TASK, seed=12345, num_envs=episodes)
        result = rollout_episodes(evaluation, runner.algo.inference_policy())
    out = {'algo': algo, 'budget_s': budget_s, 'wall_s': summary['wall_s'],
           'env_steps': summary['env_steps'], 'iterations': summary['iterations'],
           'lin_vel_error_mps': result['lin_vel_error_mps'], 'fall_rate': result['fall_rate']}
    report(f'quadruped[{algo},{budget_s:.0f}s]',
           f"lin_vel_error {out['lin_vel_error_mps']:.3f} m/s, fall_rate "
           f"{out['fall_rate']:.3f} after {out['env_steps']} steps")
    return out


def ppo_vs_sac(budget_s: float, seed: int = 0) -> dict:
    """Both algorithms at the same budget, and the ratios of their metrics."""
    ppo, sac = (train_for(algo, budget_s, seed) for algo in ('ppo', 'sac'))
    eps = 1e-9
    return {'ppo': ppo, 'sac': sac, 'ratios': {
        # > 1: PPO tracks the commanded velocity better than SAC at equal wall clock
        'quadruped_sac_vs_ppo_lin_vel_error_equal_wall_clock':
            sac['lin_vel_error_mps'] / max(ppo['lin_vel_error_mps'], eps),
        'quadruped_ppo_fall_rate_equal_wall_clock': ppo['fall_rate'],
        'quadruped_sac_fall_rate_equal_wall_clock': sac['fall_rate']}}


if __name__ == '__main__':
    import json
    import logging
    import sys
    import torch
    logging.basicConfig(level=logging.WARNING)
    torch.set_num_threads(1)
    budget = float(sys.argv[1]) if len(sys.argv) > 1 else 300.0
    sys.stdout.write(json.dumps(ppo_vs_sac(budget)) + '\n')
