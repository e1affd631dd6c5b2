"""`sim2real robustness`: a policy at the nominal robot, at each edge of its randomization
box, at every corner and 1.25x past each edge (points: ``robustness_design``), each point
judged against the task's floors for its kind.

All points run in one batched env: each env pins the parameters of its point (a
``PerEnvRange`` with equal bounds) and draws the others from the training ranges, and its
first episode counts, as in ``sim2real eval``. Envs are run in batches of at most
``batch_envs``, each batch seeded with seed + its first point's index (so a point's
figures depend on the seed, the episodes per point and the batch size). Writes
``robustness.json``, ``robustness.md`` and ``robustness.png``.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path

import torch

from sim2real.device import device_scope
from sim2real.evaluate import collect_episodes, LoadedPolicy, summarize
from sim2real.mdp.env import RLEnv
from sim2real.mdp.ranges import bounds, get_path, pin_envs
from sim2real.robustness_design import BoxParam, design, Point
from sim2real.tasks import get_task
from sim2real.training import task_env_cfg
from sim2real.verdict import as_dicts, judge, resolution_warning

log = logging.getLogger(__name__)


def box_params(cfg) -> list[BoxParam]:
    """The task's box parameters with their trained ranges."""
    if not cfg.randomization:
        raise ValueError(f'task "{cfg.task}" declares no randomization box '
                         '(EnvCfg.randomization)')
    out = []
    for name, param in cfg.randomization.items():
        low, high = bounds(get_path(cfg, param.path))
        out.append(BoxParam(name, param, low, high))
    return out


def wilson_interval(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """95 % Wilson score interval of a proportion."""
    if n == 0:
        return (math.nan, math.nan)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def _pin(cfg, points: list[Point], episodes: int) -> None:
    """Give every box range of cfg one range per env: the point's pin, or the trained one."""
    pin_envs(cfg, len(points) * episodes,
             [(slice(i * episodes, (i + 1) * episodes), point.pins)
              for i, point in enumerate(points)])


def _run_batch(loaded: LoadedPolicy, points: list[Point], episodes: int, seed: int,
               backend: str, device: str) -> list[dict]:
    """Evaluate a batch of points in one env; one summary per point."""
    cfg = task_env_cfg(loaded.task, loaded.env_sets, loaded.action)
    _pin(cfg, points, episodes)
    cfg.num_envs, cfg.seed, cfg.backend, cfg.device = len(points) * episodes, seed, backend, device
    env = RLEnv(cfg)
    policy = loaded.bind(env)
    with device_scope(env.device):
        outcomes = collect_episodes(env, policy)
    return [summarize(outcomes, torch.arange(i * episodes, (i + 1) * episodes),
                      env.metrics.quantiles) for i in range(len(points))]


def resolution_warnings(floors: dict, episodes: int) -> list[str]:
    """Rate floors that episodes per point cannot resolve: one bad episode already breaks
    them (e.g. fall_rate <= 0.02 needs at least 50 episodes)."""
    out = []
    for kind, kind_floors in floors.items():
        if kind == 'eval':   # not a point of the sweep
            continue
        texts = (resolution_warning(f, episodes) for f in kind_floors)
        out += [f'{kind}: {text}' for text in texts if text]
    return out


def _judge_point(point: Point, summary: dict, floors: dict) -> dict:
    """The point's figures, interval and verdict."""
    n = summary['episodes']
    result = {'kind': point.kind, 'label': point.label, 'pins': point.pins, **summary}
    for rate in ('success_rate', 'fall_rate'):
        if summary.get(rate) is not None:
            result[f'{rate}_ci95'] = list(wilson_interval(summary[rate] * n, n))
    own = f'{point.kind}:{next(iter(point.pins))}' if len(point.pins) == 1 else None
    passed, text = judge(summary, floors.get(own, floors.get(point.kind, ())))
    result['passed'], result['verdict'] = passed, text
    return result


def run_robustness(policy_path: str | Path, episodes: int = 32, seed: int = 12345,
                   out_dir: str | Path | None = None, max_corners: int = 256,
                   batch_envs: int = 8192, backend: str = 'mujoco', device: str = 'cpu',
                   progress: bool = True) -> dict:
    """Sweep the box for a policy; writes the report files and returns the result."""
    loaded = LoadedPolicy(policy_path)
    spec = get_task(loaded.task)
    cfg = task_env_cfg(loaded.task, loaded.env_sets, loaded.action)
    params = box_params(cfg)
    points, corner_design = design(params, max_corners)
    warnings = resolution_warnings(spec.acceptance, episodes)
    for text in warnings:
        log.warning('%s', text)
    per_batch = max(1, batch_envs // episodes)
    summaries = []
    bar = _progress(len(points), progress)
    for start in range(0, len(points), per_batch):
        batch = points[start:start + per_batch]
        summaries += _run_batch(loaded, batch, episodes, seed + start, backend, device)
        bar.update(len(batch))
    bar.close()
    results = [_judge_point(p, s, spec.acceptance) for p, s in zip(points, summaries)]
    failed = [r for r in results if not r['passed']]
    report = {
        'task': loaded.task, 'policy': str(loaded.path), 'source': loaded.source,
        'seed': seed, 'episodes_per_point': episodes, 'backend': backend, 'device': device,
        'corner_design': corner_design, 'past_factor': 1.25,
        'box': [{'name': p.name, 'path': p.cfg.path, 'low': p.low, 'high': p.high,
                 'nominal': p.cfg.nominal, 'unit': p.cfg.unit, 'integer': p.cfg.integer,
                 'source': p.cfg.source} for p in params],
        'floors': {kind: as_dicts(f) for kind, f in spec.acceptance.items()},
        'points': results,
        'resolution_warnings': warnings,
        'passed': not failed,
        'failed_points': len(failed),
    }
    if out_dir is not None:
        from sim2real.robustness_report import write_report
        report['files'] = write_report(report, Path(out_dir))
    return report


class _NoBar:
    """A progress bar that shows nothing."""

    def update(self, n: int) -> None:
        """Nothing."""

    def close(self) -> None:
        """Nothing."""


def _progress(total: int, enabled: bool):
    """A tqdm bar over the points (or nothing)."""
    if not enabled:
        return _NoBar()
    try:
        from tqdm import tqdm
    except ImportError:
        return _NoBar()
    return tqdm(total=total, unit='point', desc='robustness')
