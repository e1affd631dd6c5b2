"""Training-curve figure (return, success, losses vs env steps), rendered without pyplot."""

from __future__ import annotations

import math
import os
from pathlib import Path

# (title, history keys, y scale); symlog keeps the small, signed surrogate loss visible
_PANELS = (
    ('episode return', ('episode/return',), 'linear'),
    ('episode success', ('episode/success',), 'linear'),
    ('losses (symlog)', ('train/surrogate_loss', 'train/value_loss'), 'symlog'),
)


def _series(history: list[dict[str, float]], key: str) -> tuple[list[float], list[float]]:
    """Return (env_steps, values) of the history entries that hold a finite value for key."""
    xs, ys = [], []
    for entry in history:
        value = entry.get(key)
        if value is not None and math.isfinite(value):
            xs.append(entry['env_steps'])
            ys.append(value)
    return xs, ys


def plot_curves(history: list[dict[str, float]], path: str | os.PathLike) -> Path:
    """Write a PNG with one panel per group of logged metrics, plotted against env steps."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # heavy import, only when used
    from matplotlib.figure import Figure

    path = Path(path)
    fig = Figure(figsize=(12.0, 3.5), dpi=80)
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(_PANELS))
    fig.subplots_adjust(left=0.06, right=0.98, bottom=0.15, top=0.9, wspace=0.25)
    for ax, (title, keys, scale) in zip(axes, _PANELS):
        for key in keys:
            xs, ys = _series(history, key)
            if xs:
                ax.plot(xs, ys, label=key.split('/')[-1])
        ax.set_yscale(scale, **({'linthresh': 1e-2} if scale == 'symlog' else {}))
        ax.set_title(title)
        ax.set_xlabel('env steps')
        ax.grid(True, alpha=0.3)
        if ax.lines:
            ax.legend(loc='best', fontsize='small')
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f'.{path.name}.tmp')
    fig.savefig(tmp, format='png')
    os.replace(tmp, path)
    return path
