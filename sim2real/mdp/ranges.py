"""Randomization ranges: the (low, high) tuples of a config, or one range per env.

Training draws every parameter from one range for all envs, a tuple (or an ``EdgeRange``,
which also draws the bounds themselves more often). ``PerEnvRange`` gives each env its own
range (equal bounds pin the value), so that one batched env can evaluate a policy at many
points of the randomization box at once (``sim2real.robustness``). A PerEnvRange draws the
same random numbers as its trained tuple range (whole numbers too, given ``trained``), so
pinning one parameter leaves the draws of the others, and the free rows of the pinned
one, as training and ``sim2real eval`` with the same seed draw them.

``RandomParamCfg`` (in ``cfg.py``) names where a range lives in an ``EnvCfg`` by a dotted
path: ``events.<term>.<param>``, ``action.<param>``, ``observations.<group>.<field>``,
``scene.<param>`` or ``commands.<name>.<param>``.
"""

from __future__ import annotations

from dataclasses import dataclass, is_dataclass
from typing import Any

import torch


@dataclass(frozen=True)
class EdgeRange:
    """A (low, high) range drawn at one of its bounds with probability edge_prob (either
    bound alike), else uniformly: training sees the box's edges and corners more often."""

    low: float
    """Lower bound."""
    high: float
    """Upper bound."""
    edge_prob: float
    """Probability of a draw at a bound, in [0, 1]."""
    per_env: bool = False
    """True: an env's values of a multi-valued draw (one per joint, per axis) go to a bound
    together, so training sees the box's corners as a robustness sweep pins them (every
    joint at once); False: each value independently."""

    def __post_init__(self):
        """Validate order and probability."""
        if self.high < self.low or not 0.0 <= self.edge_prob <= 1.0:
            raise ValueError(f'EdgeRange needs low <= high and edge_prob in [0, 1], got {self}')


@dataclass
class PerEnvRange:
    """One (low, high) range per env, (N,) float64 each."""

    low: torch.Tensor
    """Lower bounds, (N,)."""
    high: torch.Tensor
    """Upper bounds, (N,)."""
    edge_prob: float = 0.0
    """Probability of a draw at a bound (as EdgeRange; pinned envs are unaffected)."""
    trained: tuple[float, float] | None = None
    """The trained (low, high) the free rows hold: whole-number draws then take the same
    random numbers as that tuple would."""
    per_env: bool = False
    """As EdgeRange.per_env, for the rows' edge draws."""
    free: Any = None
    """The config's range the unpinned rows draw (a tuple or an EdgeRange): what a stored
    config records (`sim2real.mdp.serialize.to_plain`)."""

    def __post_init__(self):
        """Validate shapes and order."""
        self.low = torch.as_tensor(self.low, dtype=torch.float64)
        self.high = torch.as_tensor(self.high, dtype=torch.float64)
        if self.low.shape != self.high.shape or self.low.dim() != 1:
            raise ValueError('PerEnvRange needs low and high of the same shape (N,)')
        if bool((self.high < self.low).any()):
            raise ValueError('PerEnvRange has an env whose high bound is below its low bound')


def bounds(value_range) -> tuple[float, float]:
    """(smallest low, largest high) of a tuple range, an EdgeRange or a PerEnvRange."""
    if isinstance(value_range, PerEnvRange):
        return float(value_range.low.min()), float(value_range.high.max())
    if isinstance(value_range, EdgeRange):
        return float(value_range.low), float(value_range.high)
    low, high = value_range
    return float(low), float(high)


def edge_prob(value_range) -> float:
    """The range's probability of a draw at a bound (0 for a plain tuple)."""
    return float(getattr(value_range, 'edge_prob', 0.0))


def _low_high(env_ids, value_range, view: tuple, device):
    """Per-row (low, high) tensors of a range for env_ids, shaped to broadcast as view."""
    if isinstance(value_range, PerEnvRange):
        ids = torch.as_tensor(env_ids).cpu()
        return (value_range.low[ids].view(view).to(device),
                value_range.high[ids].view(view).to(device))
    low, high = bounds(value_range)
    return low, high


def _corner_rows(env, env_ids) -> torch.Tensor | None:
    """Which of env_ids draw the whole box at its corners in the reset under way
    (RLEnv.corner_envs), or None when the env draws no corners (cfg.corner_prob 0)."""
    cfg = getattr(env, 'cfg', None)
    if cfg is None or getattr(cfg, 'corner_prob', 0.0) <= 0.0:
        return None
    corner = env.corner_envs
    return corner[torch.as_tensor(env_ids, device=corner.device)]


def _at_edges(env, env_ids, value, low, high, prob: float, shape: tuple,
              per_env: bool = False):
    """Replace each sample (per_env: each env's row of samples) by a random bound with
    probability prob; a corner env's row (RLEnv.corner_envs) always, at one bound."""
    corner = _corner_rows(env, env_ids)
    if prob <= 0.0 and corner is None:
        return value
    row = (shape[0],) + (1,) * (len(shape) - 1)
    draw = row if per_env else shape
    at_edge = torch.rand(draw, generator=env.rng, dtype=torch.float64) < prob
    upper = torch.rand(draw, generator=env.rng, dtype=torch.float64) < 0.5
    if corner is not None:
        corner = corner.view(row).to(at_edge.device)
        corner_upper = torch.rand(row, generator=env.rng, dtype=torch.float64) < 0.5
        at_edge = at_edge | corner
        upper = torch.where(corner, corner_upper, upper)
    edge = torch.where(upper, torch.as_tensor(high, dtype=torch.float64),
                       torch.as_tensor(low, dtype=torch.float64))
    return torch.where(at_edge, edge, value)


def sample_range(env, env_ids: torch.Tensor, value_range, shape: tuple) -> torch.Tensor:
    """U(range) samples of shape (len(env_ids), ...) from the env's generator, float64
    (an EdgeRange or PerEnvRange with edge_prob draws bounds that often)."""
    unit = torch.rand(shape, generator=env.rng, dtype=torch.float64)
    if isinstance(value_range, (tuple, list)):
        low, high = value_range
        return low + (high - low) * unit
    view = (len(env_ids),) + (1,) * (len(shape) - 1)
    low, high = _low_high(env_ids, value_range, view, unit.device)
    value = low + (high - low) * unit
    return _at_edges(env, env_ids, value, low, high, edge_prob(value_range), shape,
                     getattr(value_range, 'per_env', False))


def sample_int_range(env, env_ids: torch.Tensor, value_range) -> torch.Tensor:
    """Whole numbers uniform in [low, high] per env, (len(env_ids),) int64."""
    n = len(env_ids)
    if isinstance(value_range, (tuple, list)):
        low, high = value_range
        return torch.randint(int(low), int(high) + 1, (n,), generator=env.rng)
    trained = getattr(value_range, 'trained', None)
    if trained is not None and edge_prob(value_range) == 0.0:
        ids = torch.as_tensor(env_ids).cpu()
        low, high = value_range.low[ids].round(), value_range.high[ids].round()
        free = (low == trained[0]) & (high == trained[1])
        draws = torch.randint(int(trained[0]), int(trained[1]) + 1, (n,), generator=env.rng)
        return torch.where(free, draws, low.long())   # other rows are pinned (low == high)
    low, high = _low_high(env_ids, value_range, (n,), 'cpu')
    low, high = torch.as_tensor(low).round(), torch.as_tensor(high).round()
    unit = torch.rand((n,), generator=env.rng, dtype=torch.float64)
    value = torch.minimum(low + torch.floor(unit * (high - low + 1)), high)
    return _at_edges(env, env_ids, value, low, high, edge_prob(value_range), (n,)).long()


def bias_edges(cfg, prob: float, per_env: bool = False) -> None:
    """Draw every parameter of cfg's randomization box at a bound with probability prob
    (per_env: all of an env's values of a parameter at the same bound, see EdgeRange)."""
    for param in cfg.randomization.values():
        low, high = bounds(get_path(cfg, param.path))
        set_path(cfg, param.path, EdgeRange(low, high, prob, per_env))


def pin_envs(cfg, num_envs: int, blocks: list[tuple[slice, dict[str, float]]]) -> None:
    """Give every box range of cfg one range per env (num_envs rows): each block's rows
    pinned to its values (box parameter name -> value), the other rows drawn as before (an
    EdgeRange keeps its edge probability)."""
    for name, param in cfg.randomization.items():
        current = get_path(cfg, param.path)
        low, high = bounds(current)
        lows = torch.full((num_envs,), low, dtype=torch.float64)
        highs = torch.full((num_envs,), high, dtype=torch.float64)
        for rows, pins in blocks:
            if name in pins:
                lows[rows] = highs[rows] = pins[name]
        set_path(cfg, param.path, PerEnvRange(lows, highs, edge_prob(current),
                                              trained=(low, high),
                                              per_env=getattr(current, 'per_env', False),
                                              free=current))


def _step(obj: Any, key: str) -> tuple[Any, str, str]:
    """(container, key, kind) of one path step: 'attr', 'item' or 'param'."""
    if isinstance(obj, dict):
        if key not in obj:
            raise KeyError(key)
        return obj, key, 'item'
    if is_dataclass(obj) and hasattr(obj, key) and key != 'params':
        return obj, key, 'attr'
    params = getattr(obj, 'params', None)
    if isinstance(params, dict) and key in params:
        return params, key, 'item'
    raise KeyError(key)


def _walk(cfg, path: str) -> tuple[Any, str, str]:
    """The container holding the last key of a dotted path."""
    keys = path.split('.')
    obj = cfg
    try:
        for key in keys[:-1]:
            container, k, kind = _step(obj, key)
            obj = getattr(container, k) if kind == 'attr' else container[k]
        return _step(obj, keys[-1])
    except KeyError as exc:
        raise KeyError(f'randomization path "{path}": no "{exc.args[0]}" in the config') from exc


def get_path(cfg, path: str):
    """The value at a dotted config path."""
    container, key, kind = _walk(cfg, path)
    return getattr(container, key) if kind == 'attr' else container[key]


def set_path(cfg, path: str, value) -> None:
    """Replace the value at a dotted config path."""
    container, key, kind = _walk(cfg, path)
    if kind == 'attr':
        setattr(container, key, value)
    else:
        container[key] = value
