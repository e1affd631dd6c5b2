"""Build a run's Isaac Lab env from its task file, step it, report what it computes.

    python -m sim2real.isaaclab.check RUN_DIR [--num-envs N] [--steps N] [--device cpu]

Prints one JSON line: the articulation's joint order, the policy and critic observation
widths, the managers' term names, and after N policy steps of zero actions (the default
pose held by the PD) the median base height [m], whether every observation stayed finite,
the action delays [physics steps], encoder offsets, IMU tilts and motor strengths the envs
drew, the observation link's draws (delays in ticks, the range of the dropout
probabilities) and the share of ticks at which the first policy term's newest value
repeated the previous tick's exactly (a held or a late sample: noise makes any other repeat
vanishingly rare), the reward manager's class and the lowest reward of a step that did not
end in a fall (never below zero under the only-positive clip). The Isaac Lab stage of the
test command compares these with our task's contract.
"""

from __future__ import annotations

import argparse
import json
import math
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


def _newest_of_first_term(env, obs):
    """The first policy term's newest tick, (N, D) (Isaac Lab flattens a term's history
    oldest first)."""
    manager = env.observation_manager
    width = manager.group_obs_term_dim['policy'][0][-1]
    history = max(1, int(manager._group_obs_term_cfgs['policy'][0].history_length))
    return obs['policy'][:, width - width // history:width].clone()


def _link_report(env) -> dict:
    """The observation link's per-env draws (sim2real.isaaclab.observation_link); empty
    lists without a link."""
    from sim2real.isaaclab.observation_link import LINK_ATTR
    link = getattr(env, LINK_ATTR, None)
    if link is None:
        return {'observation_delay_ticks': [], 'observation_dropout_prob': []}
    return {'observation_delay_ticks': sorted(set(link.delay.tolist())),
            'observation_dropout_prob': [float(link.drop_prob.min()),
                                         float(link.drop_prob.max())]}


def _sensor_report(env, robot) -> dict:
    """The largest encoder offset [rad] and IMU mounting tilt [rad] the envs drew
    (sim2real.isaaclab.sensors), and the range of the motors' strength draws."""
    import torch
    from sim2real.isaaclab.sensors import state_of
    state = state_of(env)
    trace = state.imu_rotmat_bi.diagonal(dim1=1, dim2=2).sum(dim=1)
    tilt = torch.arccos(((trace - 1.0) / 2.0).clamp(-1.0, 1.0))
    strength = [a.strength.flatten() for a in robot.actuators.values()
                if hasattr(a, 'strength')]
    strength = torch.cat(strength) if strength else torch.ones(1)
    return {'encoder_bias_max_rad': float(state.encoder_bias_rad.abs().max()),
            'imu_tilt_max_rad': float(tilt.max()),
            'motor_strength': [float(strength.min()), float(strength.max())]}


def check(run_dir: Path, num_envs: int, steps: int, device: str = 'cpu') -> dict:
    """The report (see the module docstring)."""
    import torch
    with opened_env(read_task_file(run_dir), run_dir, num_envs, device) as (env, _):
        obs, _ = env.reset()
        robot = env.scene['robot']
        actions = torch.zeros(num_envs, env.action_manager.total_action_dim, device=device)
        finite = True
        repeats = 0
        lowest = math.inf   # the lowest reward of a step that did not end in a fall
        previous = _newest_of_first_term(env, obs)
        for _ in range(steps):
            obs, reward, terminated, truncated, _ = env.step(actions)
            if bool((~terminated).any()):
                lowest = min(lowest, float(reward[~terminated].min()))
            finite = finite and all(bool(torch.isfinite(v).all()) for v in obs.values())
            newest = _newest_of_first_term(env, obs)
            kept = ~(terminated | truncated)
            repeats += int(((newest == previous).all(dim=1) & kept).sum())
            previous = newest
        report = {
            'joint_names': list(robot.joint_names),
            'policy_obs_dim': int(obs['policy'].shape[1]),
            'critic_obs_dim': int(obs['critic'].shape[1]),
            'action_dim': int(env.action_manager.total_action_dim),
            'policy_terms': list(env.observation_manager.active_terms['policy']),
            'reward_terms': list(env.reward_manager.active_terms),
            'reward_manager': type(env.reward_manager).__name__,
            'lowest_reward_without_fall': lowest,
            'termination_terms': list(env.termination_manager.active_terms),
            'event_terms': sorted(t for terms in env.event_manager.active_terms.values()
                                  for t in terms),
            'steps': steps,
            'step_dt_s': float(env.step_dt),
            'base_height_m': float(robot.data.root_pos_w.torch[:, 2].median()),
            'finite': finite,
            'action_delay_steps': _delay_steps(robot),
            **_link_report(env), **_sensor_report(env, robot),
            'repeated_share': repeats / float(steps * num_envs),
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
