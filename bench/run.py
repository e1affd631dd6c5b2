"""`make bench`: every benchmark in one run, ratios against anchors measured in that run.

Writes bench/out/results.json: raw figures under 'results', a flat 'ratios' map.
"""

from __future__ import annotations

import argparse
import logging

import torch

from bench.common import report, write_results
from bench.env_throughput import env_vs_raw
from bench.ppo_update import ppo_update

# the anchors that need ROS 2, Gymnasium or Stable-Baselines3 are imported where they run, so
# the GPU set (bench/gpu.sh: --backend mjwarp --quick --skip-deploy-loop) needs none of them


def main() -> None:
    """Run the benchmarks and write results.json."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--quick', action='store_true', help='throughput only, no training')
    parser.add_argument('--max-seconds', type=float, default=900.0,
                        help='wall-clock cap of the sim2real time-to-success run')
    parser.add_argument('--sb3-budget-s', type=float, default=None,
                        help='SB3 time budget (default 3x sim2real time, at most 600 s)')
    parser.add_argument('--policy', default=None,
                        help='ONNX policy of the deploy-loop bench (default: shipped, else '
                        'an untrained export)')
    parser.add_argument('--skip-deploy-loop', action='store_true',
                        help='leave out the ROS 2 deploy-loop bench')
    parser.add_argument('--deploy-repeats', type=int, default=5,
                        help='deploy-loop windows per node, alternated; medians reported')
    parser.add_argument('--deploy-pairs', type=int, default=10,
                        help='deploy-loop pairs of windows of our node without and with its '
                        'flight recorder (the ratio of the p99s over all their ticks is '
                        'reported)')
    parser.add_argument('--deploy-realtime', action='store_true',
                        help='deploy-loop processes under SCHED_FIFO where allowed')
    parser.add_argument('--backend', default='all', choices=['all', 'mujoco', 'mjwarp'],
                        help='simulation backend(s) of the env-throughput benches')
    parser.add_argument('--device', default='cpu',
                        help="device of the mjwarp benches: 'cpu' (Warp's CPU device) or 'cuda'")
    parser.add_argument('--mjwarp-envs', type=int, default=None,
                        help='simulations of the mjwarp benches (default 1024 on cpu, 8192 on '
                        'cuda)')
    parser.add_argument('--train-tasks', default='quadrotor-hover,quadrotor-track',
                        help='comma-separated quadrotor tasks timed to 90 %% evaluated success '
                        '(not with --quick)')
    parser.add_argument('--skip-sac', action='store_true',
                        help='leave out SAC to 90 %% hover success (it runs only when '
                        '--train-tasks has quadrotor-hover)')
    parser.add_argument('--skip-sb3', action='store_true',
                        help='time sim2real to 90 %% hover success without the SB3 anchor (it '
                        'also runs only when --train-tasks has quadrotor-hover)')
    parser.add_argument('--skip-ray', action='store_true',
                        help='leave out Ray rollout workers against in-process collection')
    parser.add_argument('--quadruped-algos-s', type=float, default=300.0,
                        help='train quadruped-flat with PPO and with SAC for this many '
                        'seconds each and evaluate both (0: skip; not with --quick)')
    parser.add_argument('--quadruped-run', default=None,
                        help='run directory of a quadruped-flat training to read the wall '
                        'clock to the acceptance level from (bench/quadruped_train.py)')
    args = parser.parse_args()
    from sim2real.tasks import task_names
    train_tasks = [t for t in args.train_tasks.split(',') if t]
    unknown = sorted(set(train_tasks) - set(task_names()))
    if unknown:   # before minutes of benchmarks, not after
        parser.error(f'--train-tasks: unknown task(s) {unknown}; registered: {task_names()}')
    if args.deploy_repeats < 1 or args.deploy_pairs < 1:
        parser.error('--deploy-repeats and --deploy-pairs must be at least 1')
    logging.basicConfig(level=logging.WARNING)
    torch.set_num_threads(1)
    results, ratios = {}, {}
    if args.backend in ('all', 'mujoco'):
        from bench.quadruped_env import quadruped_env, quadruped_env_ratios
        results['env_vs_raw_quadrotor'] = env_vs_raw('quadrotor-hover')
        ratios['env_vs_raw_quadrotor'] = results['env_vs_raw_quadrotor']['ratio']
        results['quadruped_env'] = quad = quadruped_env()
        # >= 0.85: the env layer costs at most 15 % over bare PD stepping of the same batch;
        # >= 5: the batched env against Gymnasium's AsyncVectorEnv on the same model
        ratios.update(quadruped_env_ratios(quad))   # walking: the shipped policy's actions
    if args.backend in ('all', 'mjwarp'):
        envs = args.mjwarp_envs or (1024 if args.device == 'cpu' else 8192)
        for task, key in (('quadrotor-hover', 'quadrotor'), ('quadruped-flat', 'quadruped')):
            name = f'env_vs_raw_{key}_mjwarp'
            results[name] = env_vs_raw(task, num_envs=envs, repeats=10 if envs <= 1024 else 30,
                                       backend='mjwarp', device=args.device)
            ratios[name] = results[name]['ratio']
    # >= 1: our PPO update processes samples at least as fast as rsl_rl's on the same
    # network and batch
    results['ppo_update'] = update = ppo_update(
        device=args.device if args.backend == 'mjwarp' else 'cpu')
    ratios['ppo_update_vs_rsl_rl'] = update['ratio']
    import importlib.util
    if (not args.skip_ray and args.backend in ('all', 'mujoco')
            and importlib.util.find_spec('ray') is not None):   # the extra 'ray'
        from bench.ray_sampling import chunk_overhead, per_iteration
        results['ray_per_iteration'] = ray_it = per_iteration()
        # <= 1.1: Ray workers cost at most 10 % per iteration over in-process collection
        ratios['ray_vs_in_process_per_iteration_hover'] = ray_it['ratio']
        results['ray_chunk_overhead'] = chunks = chunk_overhead()
        for row in chunks['rows']:   # > 1: what a chunk of T steps per env costs through Ray
            ratios[f'ray_vs_in_process_chunk_T{row["steps_per_env"]}'] = row['ratio']
    if args.quadruped_algos_s and not args.quick:
        from bench.quadruped_algos import ppo_vs_sac
        results['quadruped_ppo_vs_sac'] = algos = ppo_vs_sac(args.quadruped_algos_s)
        ratios.update(algos['ratios'])
    if args.quadruped_run:
        from bench.quadruped_train import time_to_level
        results['quadruped_train'] = time_to_level(args.quadruped_run)
    if not args.skip_deploy_loop:
        from bench.deploy_loop import deploy_loop
        results['deploy_loop'] = loop = deploy_loop(
            args.policy, repeats=args.deploy_repeats, realtime=args.deploy_realtime,
            pairs=args.deploy_pairs)
        # > 1 means our policy node's 500 Hz loop is steadier than the plain rclpy node's
        # (MultiThreadedExecutor; '_plain_single_': the same node on a SingleThreadedExecutor)
        ratios.update(loop['ratios'])
    ours = None
    if not args.quick:
        from bench.train_hover import SAC_EVAL_EVERY, time_to_success
        backend = 'mjwarp' if args.backend == 'mjwarp' else 'mujoco'
        suffix = '' if backend == 'mujoco' else f'_{backend}_{args.device.split(":")[0]}'
        for task in train_tasks:
            out = time_to_success(max_seconds=args.max_seconds, backend=backend,
                                  device=args.device if backend == 'mjwarp' else 'cpu',
                                  task=task)
            key = task.split('-')[-1]   # hover, track
            results[f'train_{key}_sim2real'] = out
            ratios[f'{key}_wall_clock_to_90pct_s{suffix}'] = out['wall_s']
            if task == 'quadrotor-hover':
                ours = out
    if ours is not None and not args.skip_sac:
        sac = time_to_success(max_seconds=args.max_seconds, backend=backend,
                              device=args.device if backend == 'mjwarp' else 'cpu',
                              algo='sac', eval_every=SAC_EVAL_EVERY)
        results['train_hover_sac'] = sac
        ratios[f'hover_sac_wall_clock_to_90pct_s{suffix}'] = sac['wall_s']
        # > 1 means SAC reaches 90 % hover success sooner than PPO (a lower bound when SAC
        # did not reach it: then its wall_s is the budget)
        ratios[f'ppo_vs_sac_time_to_90pct_hover{suffix}'] = ours['wall_s'] / sac['wall_s']
    if ours is not None and not args.skip_sb3:
        from bench.sb3_hover import sb3_time_to_success
        budget = args.sb3_budget_s or min(3.0 * ours['wall_s'], 600.0)
        sb3 = sb3_time_to_success(budget)
        results['train_hover_sb3'] = sb3
        # > 1 means sim2real reaches the success level faster; a lower bound if SB3 did not
        ratios['sb3_vs_sim2real_time_to_90pct_hover'] = sb3['wall_s'] / ours['wall_s']
        results['sb3_ratio_is_lower_bound'] = not sb3['reached']
    path = write_results(results, ratios)
    report('results', str(path))


if __name__ == '__main__':
    main()
