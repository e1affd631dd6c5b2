"""`make bench`: every benchmark in one run, ratios against anchors measured in that run.

Writes bench/out/results.json: raw figures under 'results', a flat 'ratios' map.
"""

from __future__ import annotations

import argparse
import logging

import torch

from bench.common import report, write_results
from bench.deploy_loop import deploy_loop
from bench.env_throughput import env_vs_raw
from bench.quadruped_env import quadruped_env, quadruped_env_ratios
from bench.quadruped_train import time_to_level
from bench.sb3_hover import sb3_time_to_success
from bench.train_hover import time_to_success


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
    parser.add_argument('--deploy-repeats', type=int, default=1,
                        help='deploy-loop windows per node, alternated; medians reported')
    parser.add_argument('--deploy-realtime', action='store_true',
                        help='deploy-loop processes under SCHED_FIFO where allowed')
    parser.add_argument('--quadruped-run', default=None,
                        help='run directory of a quadruped-flat training to read the wall '
                        'clock to the acceptance level from (bench/quadruped_train.py)')
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    torch.set_num_threads(1)
    results, ratios = {}, {}
    results['env_vs_raw_quadrotor'] = env_vs_raw('quadrotor-hover')
    ratios['env_vs_raw_quadrotor'] = results['env_vs_raw_quadrotor']['ratio']
    results['quadruped_env'] = quad = quadruped_env()
    # >= 0.85: the env layer costs at most 15 % over bare PD stepping of the same batch;
    # >= 5: the batched env against Gymnasium's AsyncVectorEnv on the same model
    ratios.update(quadruped_env_ratios(quad))   # walking: the shipped policy's actions
    if args.quadruped_run:
        results['quadruped_train'] = time_to_level(args.quadruped_run)
    if not args.skip_deploy_loop:
        results['deploy_loop'] = loop = deploy_loop(
            args.policy, repeats=args.deploy_repeats, realtime=args.deploy_realtime)
        # > 1 means our policy node's 500 Hz loop is steadier than the plain rclpy node's
        # (MultiThreadedExecutor; '_plain_single_': the same node on a SingleThreadedExecutor)
        ratios.update(loop['ratios'])
    if not args.quick:
        ours = time_to_success(max_seconds=args.max_seconds)
        results['train_hover_sim2real'] = ours
        ratios['hover_wall_clock_to_90pct_s'] = ours['wall_s']
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
