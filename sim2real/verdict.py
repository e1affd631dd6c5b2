"""Verdicts: floors a task states for its metrics, judged in words a person can read.

A command that judges (``eval``, ``robustness``, ``hil``) prints one line per check,
``pass`` or ``FAIL`` with the figure and its floor, and exits with status 1 when any fails
(3 when nothing failed but some checks could not be judged).
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Iterable

EXIT_FAIL = 1
"""Exit status of a command whose verdict is fail (2 stays for errors)."""
EXIT_INCONCLUSIVE = 3
"""Exit status of a command that could not judge: nothing failed, but some checks could
not be judged (`sim2real hil` where a stalled machine disturbed every attempt)."""


@dataclass(frozen=True)
class Floor:
    """One acceptance bound: metric op value, e.g. success_rate >= 0.9."""

    metric: str
    """Key of the metric in a result dict."""
    op: str
    """'>=' (at least) or '<=' (at most)."""
    value: float
    """The bound."""

    def __post_init__(self):
        """Only the two comparisons."""
        if self.op not in ('>=', '<='):
            raise ValueError(f'Floor op must be ">=" or "<=", got {self.op!r}')

    def holds(self, result: dict) -> bool:
        """Whether result[metric] meets the bound (a missing or NaN figure does not)."""
        figure = result.get(self.metric)
        if figure is None or not math.isfinite(float(figure)):
            return False
        return figure >= self.value if self.op == '>=' else figure <= self.value

    def describe(self, result: dict) -> str:
        """'success_rate 0.912 >= 0.9' (or 'is missing'); a figure that fails its floor
        with 4 digits showing it at the floor gets more digits."""
        figure = result.get(self.metric)
        if figure is None:
            return f'{self.metric} is missing (needs {self.op} {self.value:g})'
        text = f'{float(figure):.4g}'
        if not self.holds(result) and float(text) == self.value:
            text = f'{float(figure):.8g}'
        return f'{self.metric} {text} {self.op} {self.value:g}'


def parse_floor(text: str) -> Floor:
    """'rotation_rad_per_10s>=3.5' -> Floor; ValueError naming the expected form."""
    for op in ('>=', '<='):
        metric, sep, value = text.partition(op)
        if sep and metric.strip():
            try:
                return Floor(metric.strip(), op, float(value))
            except ValueError:
                break
    raise ValueError(f'{text!r} is not a floor: expected METRIC>=VALUE or METRIC<=VALUE, '
                     f'e.g. rotation_rad_per_10s>=3.5')


def judge(result: dict, floors: Iterable[Floor]) -> tuple[bool, str]:
    """(passed, 'pass: a, b' over every floor, or 'FAIL: c not met' naming only the floors
    that failed)."""
    floors = list(floors)
    if not floors:
        return True, 'pass (no floors stated)'
    failed = [f'{floor.describe(result)} not met' for floor in floors
              if not floor.holds(result)]
    if failed:
        return False, 'FAIL: ' + ', '.join(failed)
    return True, 'pass: ' + ', '.join(floor.describe(result) for floor in floors)


def resolution_warning(floor: Floor, episodes: int) -> str | None:
    """Why `episodes` cannot resolve a rate floor, or None: one bad episode already breaks
    it (e.g. fall_rate <= 0.02 needs at least 50 episodes)."""
    if not floor.metric.endswith('_rate'):
        return None
    slack = floor.value if floor.op == '<=' else 1.0 - floor.value
    if slack * episodes >= 1.0:
        return None
    need = math.ceil(1.0 / slack - 1e-9) if slack > 0.0 else None
    return (f'{floor.metric} {floor.op} {floor.value:g} fails on one episode in {episodes}'
            + (f'; use --episodes >= {need}' if need else ''))


def as_dicts(floors: Iterable[Floor]) -> list[dict]:
    """Floors as JSON-ready dicts."""
    return [{'metric': f.metric, 'op': f.op, 'value': f.value} for f in floors]
