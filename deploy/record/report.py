"""`sim2real replay --out DIR`: a markdown summary and PNG plots of a flight a person reads.

The summary holds the replay's figures, each observation term's share of ticks outside its
training band and the events (state changes and latches, enable and estop calls, and for a
HIL recording the faults the simulated robot injected). The plots are each observation term
against its band, and the robot's own panels (its folder's ``report.PANELS``: position and
attitude against the setpoint for the quadrotor, joint targets against measured joints and
base velocity against the command for joint robots), every event marked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import io
import logging
from pathlib import Path

import numpy as np

from sim2real.atomic import write_atomic
from sim2real.deploy.record.replay import ReplayResult
from sim2real.deploy.record.series import FlightSeries
from sim2real.deploy.robots import robot_module

log = logging.getLogger(__name__)


@dataclass
class Line:
    """One curve: a label, times [s] and values."""

    label: str
    t_s: np.ndarray
    values: np.ndarray
    style: str = '-'
    """matplotlib line style ('-' measured, '--' commanded or set)."""


@dataclass
class Plot:
    """One axes: a title, a y label and its curves."""

    title: str
    ylabel: str
    lines: list[Line] = field(default_factory=list)
    band: tuple[float, float] | None = None
    """A shaded horizontal band (the training band in band units)."""
    marks_t_s: np.ndarray | None = None
    """Times to mark on the axes (ticks outside the band)."""


@dataclass
class Figure:
    """A PNG of plots on a grid."""

    name: str
    """File name without '.png'."""
    title: str
    plots: list[Plot]
    ncols: int = 1


def robot_panels(series: FlightSeries) -> list[Figure]:
    """The robot's own figures (its folder's report.PANELS; none without that module)."""
    try:
        module = robot_module(series.params.get('robot', series.contract.robot), 'report')
    except (KeyError, ModuleNotFoundError):
        return []
    figures = []
    for panel in module.PANELS:
        figure = panel(series)
        if figure is not None:
            figures.append(figure)
    return figures


def band_figure(series: FlightSeries, result: ReplayResult) -> Figure | None:
    """Each banded term's newest values in band units ((v - low) / (high - low): the band
    is [0, 1]) with the ticks it was flagged at."""
    check = result.band
    if check is None or not check.names:
        return None
    ticks = [i for i, o in enumerate(result.observations) if o is not None]
    if not ticks:
        return None
    observed = np.stack([result.observations[i] for i in ticks])
    flags = np.stack(result.ood_flags)
    t = series.tick_t_s[ticks]
    plots, start = [], 0
    for term in series.contract.observations:
        width = term.size * term.history_length
        if term.band is not None:
            low, high = np.asarray(term.band.low), np.asarray(term.band.high)
            newest = observed[:, start:start + term.size]
            scaled = (newest - low) / np.maximum(high - low, 1e-9)
            column = check.names.index(term.name)
            lines = [Line(f'{term.name}[{k}]' if term.size > 1 else term.name, t, scaled[:, k])
                     for k in range(term.size)]
            plots.append(Plot(f'{term.name} ({result.ood_share()[term.name]:.1%} of ticks '
                              'outside)', 'band units', lines, band=(0.0, 1.0),
                              marks_t_s=t[flags[:, column]]))
        start += width
    return Figure('observation_bands', 'observation terms against their training band '
                  '(band = [0, 1]; red ticks: outside)', plots)


def render(figure: Figure, series: FlightSeries, path: Path) -> Path:
    """Draw a figure with every event as a vertical line; written atomically."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    nrows = -(-len(figure.plots) // figure.ncols)
    fig, axes = plt.subplots(nrows, figure.ncols, figsize=(6.5 * figure.ncols, 2.2 * nrows),
                             squeeze=False, sharex=True)
    for ax, plot in zip(axes.flat, figure.plots):
        _draw(ax, plot, series)
    for ax in list(axes.flat)[len(figure.plots):]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel('time since the first tick [s]')
    fig.suptitle(figure.title)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format='png', dpi=90)
    plt.close(fig)
    return write_atomic(path, buffer.getvalue())


def _draw(ax, plot: Plot, series: FlightSeries) -> None:
    """One axes: band, curves, flagged ticks, events."""
    if plot.band is not None:
        ax.axhspan(*plot.band, color='tab:green', alpha=0.12, lw=0)
    for line in plot.lines:
        ax.plot(line.t_s, line.values, line.style, lw=0.8, label=line.label)
    if plot.marks_t_s is not None and len(plot.marks_t_s):
        top = ax.get_ylim()[1]
        ax.plot(plot.marks_t_s, np.full(len(plot.marks_t_s), top), '|', color='red', ms=6)
    for event in series.events:
        ax.axvline(event.t_s, color='red' if event.source == 'robot' else 'grey', lw=0.6,
                   ls=':')
    ax.set_title(plot.title, fontsize=9)
    ax.set_ylabel(plot.ylabel, fontsize=8)
    if 0 < len(plot.lines) <= 6:
        ax.legend(fontsize=6, loc='upper right')


def summary_markdown(summary: dict, series: FlightSeries, verdict: str,
                     figures: list[str]) -> str:
    """The report's text: figures, training-band table, events and the plots' files."""
    from tabulate import tabulate
    rows = [(key, 'none' if summary[key] is None else summary[key]) for key in (
        'ticks', 'policy_ticks', 'max_abs_command_diff', 'max_abs_action_diff',
        'max_abs_observation_diff', 'first_state_mismatch_tick')]
    lines = [f'# Flight report: {series.contract.robot} ({series.contract.task})', '',
             f'- log: `{summary["log"]}`',
             f'- policy: `{summary["policy_sha256"][:16]}` '
             f'({"the logged one" if summary["same_policy"] else "another policy"})',
             f'- verdict: {verdict}']
    physical = series.truth_metadata
    if physical.get('physical.body'):
        lines.append(f'- simulated robot (HIL): {physical["physical.body"]} '
                     f'{float(physical["physical.true_mass_kg"]):.4g} kg (nominal '
                     f'{float(physical["physical.nominal_mass_kg"]):.4g} kg)')
    lines.append('')
    if summary.get('damage'):
        lines += [f'- the log is cut short: {summary["damage"]}', '']
    lines += ['## Replay', '', tabulate(rows, ('figure', 'value'), tablefmt='github'), '']
    lines += ['## Training band', '']
    if not summary['ood_banded']:
        lines.append('The policy carries no training band: `sim2real export POLICY.onnx --out '
                     'BANDED.onnx` measures it, and `sim2real replay LOG --policy BANDED.onnx` '
                     'flags this log with it.')
    else:
        band = [(name, f'{share:.2%}', _first(summary, name))
                for name, share in summary['ood_share'].items()]
        lines.append(tabulate(band, ('term', 'ticks outside', 'first outside [s after arm]'),
                              tablefmt='github'))
    lines += ['', '## Events', '']
    events = [(f'{e.t_s:.3f}', e.source, e.text) for e in series.events]
    lines.append(tabulate(events, ('time [s]', 'source', 'event'), tablefmt='github')
                 if events else 'none')
    lines += ['', '## Plots', ''] + [f'![{name}]({name})' for name in figures]
    return '\n'.join(lines) + '\n'


def _first(summary: dict, name: str) -> str:
    """The first time a term was outside, or '-'."""
    value = summary['ood_first_s'].get(name)
    return '-' if value is None else f'{value:.3f}'


def write_report(out_dir: str | Path, summary: dict, series: FlightSeries,
                 result: ReplayResult, verdict: str) -> list[Path]:
    """report.md and the PNG plots in out_dir; the paths written."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    figures = [f for f in (band_figure(series, result), *robot_panels(series)) if f]
    written = [render(f, series, out_dir / f'{f.name}.png') for f in figures]
    text = summary_markdown(summary, series, verdict, [p.name for p in written])
    write_atomic(out_dir / 'report.md', text)
    log.info('report: %s and %d plots in %s', 'report.md', len(written), out_dir)
    return [out_dir / 'report.md', *written]
