"""Evaluate a policy (an ONNX file or a run directory) on its task under full randomization.

Each of the N episodes runs in its own environment, all started together; the first
episode of each counts. An ONNX file is run with onnxruntime, so the reported figures are
those of the exported policy.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from sim2real.contract import Contract, ContractError
from sim2real.device import device_scope
from sim2real.export.onnx_policy import INPUT_NAME, OUTPUT_NAME
from sim2real.onnx_io import load_policy
from sim2real.mdp.contract import contract_from_env
from sim2real.mdp.env import RLEnv
from sim2real.policy_io import load_run
from sim2real.training import build_env, TrainArgs

log = logging.getLogger(__name__)

Policy = Callable[[torch.Tensor], torch.Tensor]


def check_contract(stored: Contract, env_contract: Contract) -> None:
    """Refuse a policy whose contract differs from the env's, naming the first field."""
    for name in ('task', 'robot', 'urdf_sha256', 'policy_rate_hz', 'physics_rate_hz',
                 'observations', 'action'):
        a, b = getattr(stored, name), getattr(env_contract, name)
        if name == 'action':
            a, b = (a.kind, a.size), (b.kind, b.size)
        if name == 'observations':
            a = [(t.name, t.size, t.scale, t.clip) for t in a]
            b = [(t.name, t.size, t.scale, t.clip) for t in b]
        if a != b:
            raise ContractError(f'contract field "{name}" of the policy ({a}) does not match '
                                f'the environment ({b})')


def onnx_policy(path: str | Path) -> tuple[Policy, Contract]:
    """An onnxruntime policy callable and its contract."""
    contract, session = load_policy(path)

    def act(obs: torch.Tensor) -> torch.Tensor:
        out = session.run([OUTPUT_NAME],
                          {INPUT_NAME: obs.cpu().numpy().astype(np.float32)})[0]
        return torch.from_numpy(out).to(obs.device)
    return act, contract


def rollout_episodes(env: RLEnv, policy: Policy) -> dict:
    """Run every env through its first episode; returns success rate and error metrics.

    Task metrics with a ``last_error_m`` (position tasks) add position_error_m and its 95th
    percentile; those with ``last_values`` (name -> per-env value of the last episode, NaN
    when unmeasured) add the mean of each over the episodes that measured it.
    """
    n = env.num_envs
    obs = env.reset()
    captured = torch.zeros(n, dtype=torch.bool)
    success = torch.zeros(n, dtype=torch.bool)
    crashed = torch.zeros(n, dtype=torch.bool)
    metrics = env.metrics
    sources = dict(getattr(metrics, 'last_values', {}))
    if hasattr(metrics, 'last_error_m'):
        sources['position_error_m'] = metrics.last_error_m
    values = {name: torch.full((n,), math.nan) for name in sources}
    finished_before = metrics.finished.clone()  # the env may have run episodes before
    with torch.no_grad():
        for _ in range(env.max_episode_length):
            obs, _, terminated, _, _ = env.step(policy(obs['policy']))
            new = (metrics.finished > finished_before) & ~captured
            success[new] = metrics.last_success[new]
            for name, source in sources.items():
                values[name][new] = source[new]
            crashed[new] = terminated[new]
            captured |= new
            if bool(captured.all()):
                break
    result = {
        'episodes': n,
        'success_rate': success.float().mean().item(),
        'termination_rate': crashed.float().mean().item(),
    }
    for name, value in values.items():
        finite = value[~torch.isnan(value)]
        result[name] = finite.mean().item() if len(finite) else None
        if name == 'position_error_m':
            result['position_error_p95_m'] = finite.quantile(0.95).item() if len(finite) else None
    return result


def evaluate(policy_path: str | Path, episodes: int, seed: int = 12345,
             play: bool = False, video: str | Path | None = None, backend: str = 'mujoco',
             device: str = 'cpu') -> dict:
    """Evaluate an ONNX file or a run directory's newest checkpoint on a simulation backend
    (optionally recording a GIF)."""
    path = Path(policy_path)
    if path.is_dir():
        model, config = load_run(path)
        args = TrainArgs(**config['args'])
        task, action, source = args.task, args.action, 'checkpoint'

        def policy(obs):
            return model.act_inference(obs)
        contract = None
    else:
        policy, contract = onnx_policy(path)
        task, action, source = contract.task, contract.action.kind, 'onnx'
    env = build_env(task, seed, episodes, action, play=play, backend=backend, device=device)
    if contract is None:
        model.to(env.device)   # a checkpoint loads on the CPU
    else:
        check_contract(contract, contract_from_env(env))
    result = {'task': task, 'policy': str(path), 'source': source, 'seed': seed,
              'randomization': 'play' if play else 'full', 'backend': backend,
              'device': device}
    with device_scope(env.device):
        result.update(rollout_episodes(env, policy))
    if video is not None:
        from sim2real.render import record_rollout
        result['video'] = str(record_rollout(env, policy, video))
    return result
