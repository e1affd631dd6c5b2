"""Wall clock of sim2real PPO to >= 90 % hover success, then a deterministic evaluation."""

from __future__ import annotations

import tempfile
import time

from bench.common import report
from sim2real.evaluate import rollout_episodes
from sim2real.policy_io import load_run
from sim2real.training import build_env, train, TrainArgs

TARGET_SUCCESS = 0.9


def time_to_success(seed: int = 0, max_seconds: float = 600.0, eval_episodes: int = 256,
                    target: float = TARGET_SUCCESS) -> dict:
    """Train quadrotor-hover until the training episodes' success rate reaches target."""
    with tempfile.TemporaryDirectory() as run_dir:
        start = time.monotonic()
        summary = train(TrainArgs(task='quadrotor-hover', seed=seed, max_seconds=max_seconds,
                                  max_iterations=100000), run_dir, progress_bar=False,
                        stop_when=lambda e: e.get('episode/success', 0.0) >= target)
        wall_s = time.monotonic() - start
        model, _ = load_run(run_dir)
    env = build_env('quadrotor-hover', seed=12345, num_envs=eval_episodes)
    result = rollout_episodes(env, model.act_inference)
    reached = summary.get('episode/success', 0.0) >= target
    out = {'wall_s': wall_s, 'reached': reached, 'env_steps': summary['env_steps'],
           'iterations': summary['iterations'], 'train_success': summary.get('episode/success'),
           'eval': result}
    report('train_hover[sim2real]', f"{'reached' if reached else 'NOT reached'} "
           f"{target:.0%} success in {wall_s:.0f} s ({summary['env_steps']:,} steps); "
           f"eval success {result['success_rate']:.3f} (goal <= 60 s; L2F anchor 18 s, C++)")
    return out
