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

import torch

from sim2real.contract import Contract, ContractError
from sim2real.device import device_scope
from sim2real.contract_digest import verified_contract
from sim2real.export.onnx_policy import onnx_callable
from sim2real.onnx_io import load_model
from sim2real.mdp.contract import contract_from_env
from sim2real.mdp.env import RLEnv
from sim2real.mdp.metrics import EpisodeMetrics, quantile_name
from sim2real.policy_io import load_run
from sim2real.tasks import get_task
from sim2real.training import build_env, task_env_sets, TrainArgs
from sim2real.verdict import as_dicts, judge, resolution_warning

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
            a = [(t.name, t.size, t.scale, t.clip, t.history_length) for t in a]
            b = [(t.name, t.size, t.scale, t.clip, t.history_length) for t in b]
        if a != b:
            raise ContractError(f'contract field "{name}" of the policy ({a}) does not match '
                                f'the environment ({b})')


def onnx_policy(path: str | Path) -> tuple[Policy, Contract]:
    """An onnxruntime policy callable and its contract."""
    model = load_model(path)
    return onnx_callable(model, str(path)), verified_contract(model, str(path))


def collect_episodes(env: RLEnv, policy: Policy) -> dict[str, torch.Tensor]:
    """Run every env through its first episode; per-env outcomes, (N,) each.

    'success' and 'terminated' (bool), then each of the metrics' ``last_values`` (name ->
    per-env value of the last episode; `sim2real.mdp.metrics.EpisodeMetrics`); NaN where an
    episode did not measure it.
    """
    n = env.num_envs
    obs = env.reset()
    captured = torch.zeros(n, dtype=torch.bool)
    success = torch.zeros(n, dtype=torch.bool)
    crashed = torch.zeros(n, dtype=torch.bool)
    metrics = env.metrics
    if not isinstance(metrics, EpisodeMetrics):
        raise TypeError(f'task "{env.cfg.task}": its metrics term '
                        f'{type(metrics).__name__} lacks the EpisodeMetrics interface')
    sources = metrics.last_values
    values = {name: torch.full((n,), math.nan) for name in sources}
    finished_before = metrics.finished.clone()  # the env may have run episodes before
    with torch.no_grad():
        for _ in range(env.max_episode_length):
            obs, _, terminated, _, _ = env.step(policy(obs['policy']))
            new = (metrics.finished > finished_before) & ~captured
            success[new] = metrics.last_success[new]
            for name, source in sources.items():
                values[name][new] = source[new].cpu()
            crashed[new] = terminated[new]
            captured |= new
            if bool(captured.all()):
                break
    return {'success': success, 'terminated': crashed, **values}


def summarize(outcomes: dict[str, torch.Tensor], rows: torch.Tensor | None = None,
              quantiles: dict[str, float] | None = None) -> dict:
    """Success rate, termination rate and the mean of each metric over rows (default all),
    and the quantiles the task's metrics ask for (name -> q)."""
    def pick(values):
        return values if rows is None else values[rows]
    success, crashed = pick(outcomes['success']), pick(outcomes['terminated'])
    result = {
        'episodes': len(success),
        'success_rate': success.float().mean().item(),
        'termination_rate': crashed.float().mean().item(),
    }
    for name, value in outcomes.items():
        if name in ('success', 'terminated'):
            continue
        value = pick(value)
        finite = value[~torch.isnan(value)]
        result[name] = finite.mean().item() if len(finite) else None
        if name in (quantiles or {}):
            q = quantiles[name]
            result[quantile_name(name, q)] = finite.quantile(q).item() if len(finite) else None
    return result


def rollout_episodes(env: RLEnv, policy: Policy) -> dict:
    """Run every env through its first episode; success rate and error metrics."""
    return summarize(collect_episodes(env, policy), quantiles=env.metrics.quantiles)


class LoadedPolicy:
    """A policy to evaluate: an ONNX file (onnxruntime) or a run's newest checkpoint."""

    def __init__(self, policy_path: str | Path, iteration: int | None = None):
        """Load the file or the run directory's checkpoint (iteration None: the newest)."""
        self.path = Path(policy_path)
        self.checkpoint: Path | None = None
        self._model = None
        self.contract: Contract | None = None
        self.env_sets: list[str] = []
        """A run directory's `--set env.` overrides of the task. An ONNX file is evaluated
        on the task as registered (its contract check refuses another observation layout;
        the overrides themselves are not stored in the file)."""
        if self.path.is_dir():
            self._model, config, self.checkpoint = load_run(self.path, iteration)
            args = TrainArgs(**config['args'])
            self.task, self.action, self.source = args.task, args.action, 'checkpoint'
            self.env_sets = task_env_sets(args.sets)
        else:
            if iteration is not None:
                raise ValueError(f'--checkpoint: {self.path} is an ONNX file, not a run '
                                 'directory with checkpoints')
            self._act, self.contract = onnx_policy(self.path)
            self.task, self.action = self.contract.task, self.contract.action.kind
            self.source = 'onnx'

    def layout(self) -> list | None:
        """An imported policy's observation layout (its contract's: the task's terms read its
        own way, `sim2real import-isaaclab`); None for ours, judged against the task as it
        is today."""
        if self.contract is None or 'imported_from' not in self.contract.robot_params:
            return None
        return self.contract.observations

    def bind(self, env: RLEnv) -> Policy:
        """The callable for env, refusing an ONNX contract that does not match it."""
        if self._model is None:
            check_contract(self.contract, contract_from_env(env))
            return self._act
        return self._model.to(env.device)   # a checkpoint loads on the CPU


def evaluate(policy_path: str | Path, episodes: int, seed: int = 12345,
             play: bool = False, video: str | Path | None = None, backend: str = 'mujoco',
             device: str = 'cpu', iteration: int | None = None) -> dict:
    """Evaluate an ONNX file or a run directory's newest checkpoint on a simulation backend
    (optionally recording a GIF); the result holds the task's verdict."""
    loaded = LoadedPolicy(policy_path, iteration)
    task = loaded.task
    env = build_env(task, seed, episodes, loaded.action, play=play, backend=backend,
                    device=device, sets=loaded.env_sets, observations=loaded.layout())
    policy = loaded.bind(env)
    result = {'task': task, 'policy': str(loaded.path), 'source': loaded.source,
              **({'checkpoint': str(loaded.checkpoint)} if loaded.checkpoint else {}),
              'seed': seed,
              'randomization': 'play' if play else 'full', 'backend': backend,
              'device': device}
    with device_scope(env.device):
        result.update(rollout_episodes(env, policy))
    floors = get_task(task).acceptance.get('eval', ())
    result['warnings'] = [text for text in (resolution_warning(f, episodes) for f in floors)
                          if text]
    for text in result['warnings']:
        log.warning('too few episodes for the floor: %s', text)
    passed, text = judge(result, floors)
    result['verdict'] = {'passed': passed, 'text': text, 'floors': as_dicts(floors)}
    if video is not None:
        from sim2real.render import record_rollout
        result['video'] = str(record_rollout(env, policy, video))
    return result
