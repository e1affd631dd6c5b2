"""Run one of our ONNX policies in its task's Isaac Lab env and measure its episodes.

    python -m sim2real.isaaclab.evaluate RUN_DIR --policy FILE.onnx [--episodes N]
        [--seed S] [--device cpu] [--out RESULT.json]

RUN_DIR holds the task file (`sim2real eval FILE --backend isaaclab` writes it in a
temporary folder and reads the JSON line this prints). Each of N envs runs one episode from
the env's reset; the policy reads our layout (history newest first, our joint order), mapped
from Isaac Lab's vector by `sim2real.isaaclab.layout`, its raw actions clipped as the
contract says and put into the articulation's order. The episode metrics are the robot's
(`metrics` beside its Isaac Lab env builder), with our names and definitions; `ended_by`
counts the termination terms that ended the episodes.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

import numpy as np

from sim2real.isaaclab.layout import isaaclab_to_ours
from sim2real.isaaclab.scene import opened_env, read_task_file


class LayoutError(ValueError):
    """The policy's contract does not describe the env's policy vector."""


def check_contract(contract, task: dict) -> None:
    """Refuse a policy whose observation terms (name, size, scale, clip, history) or action
    (kind, scale) are not those of the task file the env is built from, naming the item."""
    built = task['contract']
    for k, (ours, theirs) in enumerate(zip(contract.observations, built['observations'])):
        for field in ('name', 'size', 'scale', 'clip', 'history_length'):
            if getattr(ours, field) != theirs[field]:
                raise LayoutError(f'observations[{k}].{field} {getattr(ours, field)!r}: the '
                                  f'Isaac Lab env computes {theirs[field]!r}')
    if len(contract.observations) != len(built['observations']):
        raise LayoutError(f'{len(contract.observations)} observation terms: the Isaac Lab env '
                          f'computes {len(built["observations"])}')
    for field, got, want in (('action.kind', contract.action.kind, built['action']['kind']),
                             ('action.params.scale', contract.action.params.get('scale'),
                              built['action']['params'].get('scale'))):
        if got != want:
            raise LayoutError(f'{field} {got!r}: the Isaac Lab env uses {want!r}')


def check_layout(contract, task: dict, env) -> None:
    """check_contract, then the env's policy width and articulation joints."""
    check_contract(contract, task)
    dims = env.observation_manager.group_obs_dim['policy'][0]
    if dims != contract.observation_size:
        raise LayoutError(f'observation size {contract.observation_size}: the env gives {dims}')
    joints = list(env.scene['robot'].joint_names)
    if sorted(joints) != sorted(contract.joint_names):
        raise LayoutError(f'joints {contract.joint_names}: the articulation has {joints}')


def _plain(value):
    """value with NaN as None (JSON null), recursively."""
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def evaluate(run_dir: Path, policy: Path, episodes: int, seed: int,
             device: str = 'cpu') -> dict:
    """Metrics of one episode per env over `episodes` envs (means, fall rate)."""
    import torch
    from sim2real.onnx_io import load_policy
    task = read_task_file(run_dir)
    contract, session = load_policy(policy)
    if contract.task != task['task']:
        raise LayoutError(f'{policy} is a policy of task "{contract.task}", the task file of '
                          f'"{task["task"]}"')
    module = importlib.import_module(task['isaaclab_env'].partition(':')[0])
    clip = contract.action.params.get('clip')
    with opened_env(task, run_dir, episodes, device, seed) as (env, _):
        check_layout(contract, task, env)
        joints = list(env.scene['robot'].joint_names)
        index = torch.as_tensor(isaaclab_to_ours(
            [(t.name, t.size, t.history_length) for t in contract.observations],
            contract.joint_names, joints))
        to_theirs = torch.as_tensor([contract.joint_names.index(j) for j in joints])
        metrics = module.metrics(env, task)
        obs, _ = env.reset()
        running = torch.ones(episodes, dtype=torch.bool)
        ended_by: dict[str, int] = {}
        while bool(running.any()):
            theirs = obs['policy'].detach().cpu().float()
            ours = torch.empty_like(theirs)
            ours[:, index] = theirs
            action = session.run(None, {session.get_inputs()[0].name: ours.numpy()})[0]
            action = torch.as_tensor(np.asarray(action))[:, to_theirs]
            if clip is not None:
                action = action.clamp(-clip, clip)
            obs, _, terminated, truncated, _ = env.step(action.to(env.device))
            done = (terminated | truncated).cpu() & running
            metrics.update(running & ~done)
            if bool(done.any()):
                metrics.finish(done, terminated.cpu()[done])
                running &= ~done
                manager = env.termination_manager
                for name in manager.active_terms:
                    hits = int((manager.get_term(name).cpu() & done).sum())
                    if hits:
                        ended_by[name] = ended_by.get(name, 0) + hits
    out = metrics.result()
    out['termination_rate'] = (episodes - ended_by.get('time_out', 0)) / episodes
    out['ended_by'] = ended_by
    out.update({'episodes': episodes, 'task': task['task'], 'policy': str(policy),
                'seed': seed, 'engine': 'isaaclab'})
    return _plain(out)


def main(argv: list[str] | None = None) -> int:
    """Command line entry."""
    parser = argparse.ArgumentParser(prog='python -m sim2real.isaaclab.evaluate',
                                     description=__doc__.split('\n\n')[0])
    parser.add_argument('run_dir', type=Path)
    parser.add_argument('--policy', type=Path, required=True)
    parser.add_argument('--episodes', type=int, default=64)
    parser.add_argument('--seed', type=int, default=12345)
    parser.add_argument('--device', default='cpu')
    parser.add_argument('--out', type=Path, default=None,
                        help='also write the result to this JSON file')
    args = parser.parse_args(argv)
    result = evaluate(args.run_dir, args.policy, args.episodes, args.seed, args.device)
    text = json.dumps(result, sort_keys=True)
    if args.out is not None:
        args.out.write_text(text + '\n')
    sys.stdout.write(text + '\n')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
