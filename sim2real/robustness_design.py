"""The points of a robustness sweep over a task's randomization box.

- ``nominal``: every box parameter at the robot's nominal value;
- ``edge``: one parameter at a bound of its trained range, the others drawn as in training;
- ``corner``: every parameter at a bound (all 2^k combinations, or a strength-3 covering
  design when they are more than ``max_corners``: every three parameters then still meet
  all 8 combinations of their bounds);
- ``past_edge``: one parameter at nominal + 1.25 x (bound - nominal), the others as in
  training; whole-number parameters (delays) round away from nominal (2 ticks -> 3), and a
  bound equal to the nominal value has no point past it.

Noise, wind and pushes, and per-rotor or per-joint spreads, stay as in training at every
point (see ``RandomParamCfg``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
import itertools
import math

import numpy as np

from sim2real.mdp.cfg import RandomParamCfg

PAST_FACTOR = 1.25
"""How far past an edge the past_edge points lie, as a multiple of (edge - nominal)."""


@dataclass(frozen=True)
class BoxParam:
    """A box parameter with its trained range."""

    name: str
    cfg: RandomParamCfg
    low: float
    high: float


@dataclass
class Point:
    """One point of the sweep: the parameters it pins (the rest drawn as in training)."""

    kind: str
    """'nominal', 'edge', 'corner' or 'past_edge'."""
    pins: dict[str, float] = field(default_factory=dict)
    """Parameter name -> pinned value."""

    @property
    def label(self) -> str:
        """'mass_scale=1.2, thrust_scale=0.85' (or 'nominal')."""
        if not self.pins:
            return self.kind
        return ', '.join(f'{k}={_fmt(v)}' for k, v in self.pins.items())


def _fmt(value: float) -> str:
    """A short number: 3 significant digits, no trailing zeros."""
    return f'{value:.3g}'


def past_value(param: BoxParam, edge: float) -> float:
    """nominal + 1.25 (edge - nominal), whole numbers rounded away from nominal."""
    nominal = param.cfg.nominal
    value = nominal + PAST_FACTOR * (edge - nominal)
    if param.cfg.integer:
        offset = math.ceil(abs(value - nominal) - 1e-9)
        value = nominal + math.copysign(offset, edge - nominal)
    return float(value)


def covering_rows(k: int, strength: int = 3, seed: int = 0, candidates: int = 64) -> np.ndarray:
    """A greedy two-level covering array: rows of 0/1 such that every `strength` columns
    show all 2^strength combinations; (rows, k)."""
    rng = np.random.default_rng(seed)
    combos = list(itertools.combinations(range(k), strength))
    uncovered = {(c, levels) for c in combos
                 for levels in itertools.product((0, 1), repeat=strength)}
    rows = []
    while uncovered:
        pool = rng.integers(0, 2, size=(candidates, k))
        # seed the pool with one row that covers a still-uncovered combination
        (cols, levels) = next(iter(uncovered))
        pool[0, list(cols)] = levels
        gains = [sum((c, tuple(row[list(c)])) in uncovered for c in combos) for row in pool]
        best = pool[int(np.argmax(gains))]
        rows.append(best.copy())
        uncovered -= {(c, tuple(best[list(c)])) for c in combos}
    return np.array(rows, dtype=int)


def corner_rows(k: int, max_corners: int) -> tuple[np.ndarray, str]:
    """Corner rows (0: low bound, 1: high) and the design's name."""
    if 2 ** k <= max_corners or k < 3:   # fewer than 3 parameters: no triples to cover
        return np.array(list(itertools.product((0, 1), repeat=k)), dtype=int), 'full factorial'
    return covering_rows(k), 'strength-3 covering design'


def design(params: list[BoxParam], max_corners: int = 256) -> tuple[list[Point], str]:
    """Every point of the sweep in order: nominal, edges, corners, past edges."""
    points = [Point('nominal', {p.name: p.cfg.nominal for p in params})]
    for p in params:
        points += [Point('edge', {p.name: p.low}), Point('edge', {p.name: p.high})]
    rows, name = corner_rows(len(params), max_corners)
    for row in rows:
        points.append(Point('corner', {p.name: (p.high if bit else p.low)
                                       for p, bit in zip(params, row)}))
    for p in params:
        for edge in (p.low, p.high):
            if edge != p.cfg.nominal:
                points.append(Point('past_edge', {p.name: past_value(p, edge)}))
    return points, name
