"""Training wall clock of quadruped-flat to the acceptance level, read from a finished run.

A flat-ground run takes hours on 2 cores, so this bench does not train: it reads the
TensorBoard log of a run made with `sim2real train quadruped-flat` (the policy card's run)
and reports when the training episodes (stochastic policy, full randomization, pushes)
first held the acceptance level, fall_rate <= 0.02 and lin_vel_error_mps <= 0.1, as a mean
over `window` consecutive iterations; with --policy it also evaluates the exported ONNX
file the way the acceptance does (`sim2real eval --episodes 128`).
Writes bench/out/quadruped_train.json.
Run: `.venv/bin/python -m bench.quadruped_train --run-dir runs/quad_flat --policy P.onnx`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from bench.common import OUT_DIR, report, write_results

MAX_FALL_RATE, MAX_LIN_VEL_ERROR_MPS = 0.02, 0.1
KEYS = ('env_steps', 'episode/fall_rate', 'episode/lin_vel_error_mps')


def read_curves(run_dir: str | Path) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(iteration, wall time [s since the first event], value) of each key in KEYS."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    events = EventAccumulator(str(Path(run_dir) / 'tb'), size_guidance={'scalars': 0})
    events.Reload()
    out = {}
    for key in KEYS:
        scalars = events.Scalars(key)
        out[key] = tuple(np.array(v, dtype=float) for v in zip(
            *[(s.step, s.wall_time, s.value) for s in scalars]))
    start = min(out[key][1][0] for key in KEYS)
    return {key: (it, wall - start, value) for key, (it, wall, value) in out.items()}


def time_to_level(run_dir: str | Path, window: int = 10) -> dict:
    """First iteration whose trailing window holds the acceptance level, and its wall time."""
    curves = read_curves(run_dir)
    iters, wall, steps = curves['env_steps']
    fall = dict(zip(*curves['episode/fall_rate'][::2]))
    error = dict(zip(*curves['episode/lin_vel_error_mps'][::2]))
    fall_s = np.array([fall.get(i, np.nan) for i in iters])
    error_s = np.array([error.get(i, np.nan) for i in iters])
    out = {'run_dir': str(run_dir), 'iterations': int(iters[-1]), 'wall_s': float(wall[-1]),
           'env_steps': int(steps[-1]), 'window': window, 'reached': False}
    for k in range(window, len(iters) + 1):
        f, e = np.nanmean(fall_s[k - window:k]), np.nanmean(error_s[k - window:k])
        if f <= MAX_FALL_RATE and e <= MAX_LIN_VEL_ERROR_MPS:
            out.update(reached=True, iteration=int(iters[k - 1]), wall_to_level_s=float(
                wall[k - 1]), env_steps_to_level=int(steps[k - 1]))
            break
    tail = slice(max(0, len(iters) - window), len(iters))
    out['final_fall_rate'] = float(np.nanmean(fall_s[tail]))
    out['final_lin_vel_error_mps'] = float(np.nanmean(error_s[tail]))
    return out


def main() -> None:
    """Read the run (and evaluate its policy), print one line, write quadruped_train.json."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--run-dir', required=True)
    parser.add_argument('--policy', default=None, help='exported ONNX of the run to evaluate')
    parser.add_argument('--episodes', type=int, default=128)
    args = parser.parse_args()
    out = time_to_level(args.run_dir)
    if out['reached']:
        line = (f"training episodes at the level after {out['wall_to_level_s'] / 60:.1f} min "
                f"({out['env_steps_to_level']:,} steps, iteration {out['iteration']})")
    else:
        line = (f"level not reached in {out['wall_s'] / 60:.1f} min ({out['env_steps']:,} "
                f"steps): last {out['window']} iterations fall_rate "
                f"{out['final_fall_rate']:.3f}, lin_vel_error {out['final_lin_vel_error_mps']:.3f}"
                ' m/s')
    if args.policy:
        from sim2real.evaluate import evaluate
        out['eval'] = result = evaluate(args.policy, args.episodes)
        line += (f"; eval {args.episodes} episodes: fall_rate {result['fall_rate']:.3f}, "
                 f"lin_vel_error {result['lin_vel_error_mps']:.3f} m/s")
    report('quadruped_train', line + ' (goal: fall_rate <= 0.02, lin_vel_error <= 0.1)')
    write_results({'quadruped_train': out}, {}, OUT_DIR / 'quadruped_train.json')


if __name__ == '__main__':
    main()
