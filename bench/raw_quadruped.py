"""Raw mujoco.batch stepping of the quadruped model: the ceiling the env layer is measured against.

4096 simulations of urdf/quadruped.urdf at a 0.005 s physics step hold the standing pose with a
physics-rate PD in numpy on the batch views, tau = kp (q0 - q) - kd qd clipped to the effort
limits (the task's kp, 25, and kd 0.5), for 2 s of simulated time, on 1 and on 2 threads.
Prints one line and writes bench/out/raw_quadruped.json.
Run: `.venv/bin/python -m bench.raw_quadruped`.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import mujoco
import mujoco.batch
import numpy as np

from bench.common import OUT_DIR, report, write_results
from sim2real.sim.legged import legged_model
from sim2real.tasks.quadruped.cfg import KP_NM_PER_RAD as KP

URDF = Path(__file__).resolve().parents[1] / 'urdf' / 'quadruped.urdf'
KD = 0.5


def _standing_batch(model, info, num_envs: int, num_threads: int) -> mujoco.batch.Batch:
    """A batch with every robot level, in the standing pose, feet just touching the floor."""
    batch = mujoco.batch.Batch(model, num_envs, nthread=num_threads)
    batch.reset(stage=mujoco.mjtStage.mjSTAGE_NONE)
    qpos = batch.bind('qpos')
    qpos[:, 2] = info.nominal_base_height_m
    qpos[:, 3:7] = [1.0, 0.0, 0.0, 0.0]
    qpos[:, info.qpos_adr] = info.default_joint_pos_rad
    batch.forward()
    return batch


def run(num_envs: int, num_threads: int, sim_s: float, physics_dt_s: float) -> dict:
    """Physics steps/s of Batch.step with and without the numpy PD, and the final heights."""
    model, info = legged_model(URDF, physics_dt_s)
    batch = _standing_batch(model, info, num_envs, num_threads)
    qpos, qvel, ctrl = batch.bind('qpos'), batch.bind('qvel'), batch.bind('ctrl')
    q0, limit = info.default_joint_pos_rad, info.effort_limit_nm
    steps = round(sim_s / physics_dt_s)
    step_s = 0.0
    start = time.perf_counter()
    for _ in range(steps):
        tau = KP * (q0 - qpos[:, info.qpos_adr]) - KD * qvel[:, info.qvel_adr]
        ctrl[:, info.actuator_ids] = np.clip(tau, -limit, limit)
        tick = time.perf_counter()
        batch.step()
        step_s += time.perf_counter() - tick
    total_s = time.perf_counter() - start
    height = qpos[:, 2]
    return {'num_envs': num_envs, 'num_threads': num_threads, 'physics_dt_s': physics_dt_s,
            'sim_s': sim_s, 'physics_steps_per_s': num_envs * steps / total_s,
            'step_only_physics_steps_per_s': num_envs * steps / step_s,
            'base_height_mean_m': float(height.mean()), 'base_height_min_m': float(height.min()),
            'base_height_max_m': float(height.max()),
            'nominal_base_height_m': info.nominal_base_height_m,
            'finite': bool(np.isfinite(qpos).all())}


def main() -> None:
    """Measure on each thread count, print one line, write raw_quadruped.json."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--num-envs', type=int, default=4096)
    parser.add_argument('--threads', type=int, nargs='+', default=[1, 2])
    parser.add_argument('--sim-s', type=float, default=2.0, help='simulated seconds per run')
    args = parser.parse_args()
    runs = [run(args.num_envs, n, args.sim_s, 0.005) for n in args.threads]
    rates = ', '.join(f"{r['num_threads']} thr {r['physics_steps_per_s']:,.0f} "
                      f"(step only {r['step_only_physics_steps_per_s']:,.0f})" for r in runs)
    last = runs[-1]
    report('raw_quadruped', f'{args.num_envs} sims, physics steps/s: {rates}; base height '
           f"after {args.sim_s:g} s {last['base_height_mean_m']:.3f} m (min "
           f"{last['base_height_min_m']:.3f}, nominal {last['nominal_base_height_m']:.3f})")
    write_results({'raw_quadruped': runs}, {}, OUT_DIR / 'raw_quadruped.json')


if __name__ == '__main__':
    main()
