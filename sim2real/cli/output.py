"""What the CLI prints: aligned tables for people, one JSON object for scripts, and one
verdict line on stderr for commands that judge."""

from __future__ import annotations

import json
import math
import sys
from typing import Iterable, Sequence

from tabulate import tabulate

DETAIL_COLUMNS = 72
"""Width a table's free-text column wraps at."""


def figure(value) -> str:
    """A cell: numbers to 4 significant digits, '-' for a figure without a sample."""
    if value is None:
        return '-'
    if isinstance(value, bool):
        return 'yes' if value else 'no'
    if isinstance(value, float):
        return '-' if not math.isfinite(value) else f'{value:.4g}'
    if isinstance(value, (list, tuple)):
        return ', '.join(f'[{figure(v)}]' if isinstance(v, (list, tuple)) else figure(v)
                         for v in value)
    return str(value)


def table(rows: Iterable[Sequence], headers: Sequence[str], wrap_last: bool = False) -> str:
    """rows as an aligned text table under headers (wrap_last: wrap the last column)."""
    rows = [[figure(cell) for cell in row] for row in rows]
    widths = [None] * (len(headers) - 1) + [DETAIL_COLUMNS] if wrap_last else None
    return tabulate(rows, headers=list(headers), tablefmt='simple', disable_numparse=True,
                    maxcolwidths=widths)


def write(text: str = '') -> None:
    """text and a newline on stdout."""
    sys.stdout.write(text + '\n')


def write_json(obj: dict) -> None:
    """obj as one JSON line on stdout."""
    sys.stdout.write(json.dumps(obj, sort_keys=True) + '\n')


def verdict_line(what: str, passed: bool, text: str) -> int:
    """Write 'verdict <what>: <text>' to stderr; the exit status it means (0 or EXIT_FAIL)."""
    from sim2real.verdict import EXIT_FAIL
    sys.stderr.write(f'verdict {what}: {text}\n')
    return 0 if passed else EXIT_FAIL


def scalars(result: dict, skip: Iterable[str] = ()) -> list[tuple[str, object]]:
    """(key, value) of the result's plain figures: no dicts, no keys in skip."""
    skip = set(skip)
    return [(key, value) for key, value in result.items()
            if key not in skip and not isinstance(value, dict)]


def floors_by_metric(floors: Iterable[dict]) -> dict[str, str]:
    """'>= 0.9' per metric of a verdict's floors."""
    return {f['metric']: f'{f["op"]} {f["value"]:g}' for f in floors}


def metrics_table(result: dict, floors: Iterable[dict], skip: Iterable[str]) -> str:
    """The result's figures with the floor each one has, if any."""
    bounds = floors_by_metric(floors)
    return table([(key, value, bounds.get(key, '')) for key, value in scalars(result, skip)],
                 ('metric', 'value', 'floor'))
