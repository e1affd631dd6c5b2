"""Build a run's Isaac Lab env from its task file, step it, report what it computes.

    python -m sim2real.isaaclab.check RUN_DIR [--num-envs N] [--steps N] [--device cpu]

Prints one JSON line: the articulation's joint order, the policy and critic observation
widths, the managers' term names, and after N policy steps of zero actions (the default
pose held by the PD) the median base height [m], whether every observation stayed finite,
and the action delays [physics steps] the envs drew. The Isaac Lab stage of the test
command compares these with our task's contract.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from sim2real.isaaclab.scene import opened_env, read_task_file


def _delay_steps(robot) -> list[int]:
    """The distinct target delays [physics steps] the robot's delayed actuators drew over the
    envs (sim2real.isaaclab.actuators)."""
    lags: set[int] = set()
    for actuator in robot.actuators.values():
        for buffer in getattr(actuator, '_delays', ())[:1]:
            lags.update(int(v) for v in buffer.time_lags.tolist())
    return sorted(lags)


def check(run_dir: Path, num_envs: int, steps: int, device: str = 'cpu') -> dict:
    """The report (see the module docstring)."""
    import torch
    with opened_env(read_task_file(run_dir), run_dir, num_envs, device) as (env, _):
        obs, _ = env.reset()
        robot = env.scene['robot']
        actions = torch.zeros(num_envs, env.action_manager.total_action_dim, device=device)
        finite = True
        for _ in range(steps):
            obs, _, _, _, _ = env.step(actions)
            finite = finite and all(bool(torch.isfinite(v).all()) for v in obs.values())
        report = {
            'joint_names': list(robot.joint_names),
            'policy_obs_dim': int(obs['policy'].shape[1]),
            'critic_obs_dim': int(obs['critic'].shape[1]),
            'action_dim': int(env.action_manager.total_action_dim),
            'policy_terms': list(env.observation_manager.active_terms['policy']),
            'reward_terms': list(env.reward_manager.active_terms),
            'termination_terms': list(env.termination_manager.active_terms),
            'event_terms': sorted(t for terms in env.event_manager.active_terms.values()
                                  for t in terms),
            'steps': steps,
            'step_dt_s': float(env.step_dt),
            'base_height_m': float(robot.data.root_pos_w.torch[:, 2].median()),
            'finite': finite,
            'action_delay_steps': _delay_steps(robot),
        }
    return report


def main(argv: list[str] | None = None) -> int:
    """Command line entry."""
    parser = argparse.ArgumentParser(prog='python -m sim2real.isaaclab.check',
                                     description=__doc__.split('\n\n')[0])
    parser.add_argument('run_dir', type=Path)
    parser.add_argument('--num-envs', type=int, default=4)
    parser.add_argument('--steps', type=int, default=50)
    parser.add_argument('--device', default='cpu')
    args = parser.parse_args(argv)
    report = check(args.run_dir, args.num_envs, args.steps, args.device)
    sys.stdout.write(json.dumps(report) + '\n')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
