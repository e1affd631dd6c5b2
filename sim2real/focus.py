"""Training focus: a share of the envs held at the points a robustness report found weakest.

Edge and corner bias make training visit the box's bounds, but one corner of a nine-parameter
box still holds about one env in a thousand, while `sim2real robustness` judges every corner
on its own. A fine-tune with

    --set train.focus_report=runs/R/robustness/robustness.json --set train.focus_share=0.1

holds a tenth of the envs, in equal blocks, at that report's failed points and then at its
worst passing ones (``TrainCfg.focus_points`` in all), for the whole run: each block's pinned
parameters keep the point's values, everything else is drawn as in training. Points past
the trained range are not trained at (they judge how a policy degrades). The report names
its task; a report of another task, or a pin that is not a box parameter or lies outside
the run's training range, is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
import json
import logging
from pathlib import Path

from sim2real.algo_cfg import TrainCfg
from sim2real.mdp.ranges import bounds, get_path, pin_envs
from sim2real.overrides import ConfigError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Focus:
    """Where training holds its focus envs."""

    task: str
    """The task the report judged."""
    share: float
    """Share of each env batch held at the points."""
    points: tuple[dict[str, float], ...]
    """Each point's pins: box parameter name -> value."""


def _badness(point: dict) -> tuple:
    """Sort key, weakest first: failed, then most terminations, then least success."""
    return (bool(point['passed']), -float(point.get('termination_rate') or 0.0),
            float(point.get('success_rate') or 0.0))


def read_focus(train_cfg: TrainCfg) -> Focus | None:
    """The focus of a training config (None without a report); ConfigError for an unreadable
    report or one with no points, and for a report without a share or a share without one."""
    if (train_cfg.focus_share > 0.0) != (train_cfg.focus_report is not None):
        raise ConfigError('train.focus_report and train.focus_share > 0 go together, got '
                          f'{train_cfg.focus_report!r} and {train_cfg.focus_share}')
    if train_cfg.focus_report is None:
        return None
    path = Path(train_cfg.focus_report)
    try:
        report = json.loads(path.read_text())
        points = sorted((p for p in report['points']
                         if p['pins'] and p.get('kind') != 'past_edge'), key=_badness)
        task = str(report['task'])
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ConfigError(f'train.focus_report {path}: not a readable robustness report '
                          f'({err})') from err
    failed = sum(not p['passed'] for p in points)
    chosen = points[:max(failed, train_cfg.focus_points)]
    if not chosen:
        raise ConfigError(f'train.focus_report {path}: the report has no pinned points')
    return Focus(task, train_cfg.focus_share,
                 tuple({k: float(v) for k, v in p['pins'].items()} for p in chosen))


def focus_blocks(focus: Focus, num_envs: int) -> list[tuple[slice, dict[str, float]]]:
    """(rows, pins) per point: round(share x num_envs) envs split evenly over the points, from
    row 0 (at least one env per point)."""
    per_point = max(1, round(focus.share * num_envs) // len(focus.points))
    if per_point * len(focus.points) > num_envs:
        raise ConfigError(f'train.focus_share {focus.share}: {len(focus.points)} focus points '
                          f'need at least {len(focus.points)} envs, the batch has {num_envs}')
    return [(slice(i * per_point, (i + 1) * per_point), pins)
            for i, pins in enumerate(focus.points)]


def apply_focus(cfg, focus: Focus) -> None:
    """Hold cfg's focus envs at their points (cfg.num_envs set); ConfigError for a report of
    another task or a pin that is not one of the task's box parameters."""
    if focus.task != cfg.task:
        raise ConfigError(f'train.focus_report judged task "{focus.task}", training '
                          f'"{cfg.task}"')
    unknown = sorted({k for pins in focus.points for k in pins} - set(cfg.randomization))
    if unknown:
        raise ConfigError(f'train.focus_report pins {unknown}, not box parameters of '
                          f'"{cfg.task}" ({", ".join(cfg.randomization)})')
    for pins in focus.points:
        for name, value in pins.items():
            low, high = bounds(get_path(cfg, cfg.randomization[name].path))
            if not low - 1e-9 <= value <= high + 1e-9:
                raise ConfigError(f'train.focus_report pins {name}={value:g}, outside the '
                                  f'trained range [{low:g}, {high:g}]')
    blocks = focus_blocks(focus, cfg.num_envs)
    pin_envs(cfg, cfg.num_envs, blocks)
    log.info('training focus: %d of %d envs at %d points of the report: %s',
             blocks[-1][0].stop, cfg.num_envs, len(blocks),
             '; '.join(', '.join(f'{k}={v:g}' for k, v in pins.items()) for _, pins in blocks))
