"""Raw mujoco.batch stepping of the hand + cube model: what the hand task can afford per core.

N simulations of urdf/hand.urdf with its cube hold the default grasp under a physics-rate PD in
numpy on the batch views (tau = kp (q0 - q) - kd qd, clipped to the URDF effort; kp 3 N m/rad,
kd 0.1 N m s/rad as LEAP's simulations) while a sinusoidal sweep of +-0.3 rad moves every
finger joint (so contacts change as in rotation), for sim_s of simulated time. One row per
(physics step, solver, threads): physics steps/s, control steps/s at 20 Hz, contacts per
sim, cube drops (below the spawn height by more than 5 cm) and whether everything stayed
finite. Prints one line per row and writes bench/out/raw_hand.json.
Run: `.venv/bin/python -m bench.raw_hand` (add `--quick` for one configuration).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import mujoco
import mujoco.batch
import numpy as np

from bench.common import OUT_DIR, report, write_results
from sim2real.sim.in_hand import in_hand_model, SolverCfg

URDF = Path(__file__).resolve().parents[1] / 'urdf' / 'hand.urdf'
KP, KD = 3.0, 0.1
CONTROL_HZ = 20.0
SWEEP_RAD, SWEEP_HZ = 0.3, 1.0
SOLVERS = {'pg5/8': SolverCfg(5, 8), 'ours20/10': SolverCfg(), 'mujoco100/50': SolverCfg(100, 50)}
"""Playground's LEAP setting, ours (SolverCfg's defaults) and MuJoCo's defaults."""
REFERENCE = (0.001, 'mujoco100/50')
"""The converged row the others' drop fractions are compared with."""


def run(num_envs: int, num_threads: int, sim_s: float, physics_dt_s: float,
        solver: str) -> dict:
    """Physics steps/s of Batch.step with the numpy PD, contacts and drops, for one setting."""
    model, info = in_hand_model(URDF, physics_dt_s, SOLVERS[solver])
    batch = mujoco.batch.Batch(model, num_envs, nthread=num_threads)
    batch.reset(stage=mujoco.mjtStage.mjSTAGE_NONE)
    qpos, qvel, ctrl = batch.bind('qpos'), batch.bind('qvel'), batch.bind('ctrl')
    ncon = batch.bind('ncon')
    q0, limit = info.default_joint_pos_rad, info.effort_limit_nm
    qpos[:, info.qpos_adr] = q0
    batch.forward()
    phase = np.random.default_rng(0).uniform(0, 2 * np.pi, (num_envs, len(q0)))
    steps = round(sim_s / physics_dt_s)
    contacts = 0.0
    start = time.perf_counter()
    for k in range(steps):
        target = q0 + SWEEP_RAD * np.sin(2 * np.pi * SWEEP_HZ * k * physics_dt_s + phase)
        target = np.clip(target, info.pos_limits_rad[:, 0], info.pos_limits_rad[:, 1])
        tau = KP * (target - qpos[:, info.qpos_adr]) - KD * qvel[:, info.qvel_adr]
        ctrl[:, info.actuator_ids] = np.clip(tau, -limit, limit)
        batch.step()
        contacts += float(ncon.mean())
    total_s = time.perf_counter() - start
    cube_z = qpos[:, info.object_qpos_adr + 2]
    rate = num_envs * steps / total_s
    return {'num_envs': num_envs, 'num_threads': num_threads, 'physics_dt_s': physics_dt_s,
            'solver': solver, 'sim_s': sim_s, 'physics_steps_per_s': rate,
            'control_steps_per_s': rate * physics_dt_s * CONTROL_HZ,
            'contacts_per_sim': contacts / steps,
            'drop_fraction': float(np.mean(cube_z < info.object_spawn_pos_m[2] - 0.05)),
            'finite': bool(np.isfinite(qpos).all())}


def main() -> None:
    """Measure each configuration, print one line per row, write raw_hand.json."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--num-envs', type=int, default=1024)
    parser.add_argument('--threads', type=int, nargs='+', default=[1, 2])
    parser.add_argument('--sim-s', type=float, default=2.0, help='simulated seconds per run')
    parser.add_argument('--quick', action='store_true', help='one configuration only')
    args = parser.parse_args()
    grid = [(0.005, 'ours20/10')] if args.quick else [
        (0.01, 'pg5/8'), (0.005, 'pg5/8'), (0.01, 'ours20/10'), (0.005, 'ours20/10'),
        (0.002, 'ours20/10'), REFERENCE]
    runs = [run(args.num_envs, n, args.sim_s, dt, solver)
            for dt, solver in grid for n in args.threads]
    for r in runs:
        report('raw_hand', f"{r['num_envs']} sims, dt {r['physics_dt_s']:g} s, {r['solver']}, "
               f"{r['num_threads']} thr: {r['physics_steps_per_s']:,.0f} physics steps/s = "
               f"{r['control_steps_per_s']:,.0f} control steps/s at 20 Hz; "
               f"{r['contacts_per_sim']:.1f} contacts/sim, drops {r['drop_fraction']:.3f}, "
               f"finite {r['finite']}")
    write_results({'raw_hand': runs}, {}, OUT_DIR / 'raw_hand.json')


if __name__ == '__main__':
    main()
