"""The robustness report as files: JSON (everything), a markdown table and a PNG."""

from __future__ import annotations

import json
import math
from pathlib import Path

from sim2real.atomic import atomic_path, write_atomic


def primary_metric(report: dict) -> str:
    """The metric the figure plots: the first one the corner floors name."""
    floors = report['floors'].get('corner') or report['floors'].get('eval') or []
    return floors[0]['metric'] if floors else 'success_rate'


def write_report(report: dict, out_dir: Path) -> dict[str, str]:
    """robustness.json, robustness.md and robustness.png under out_dir; their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    files = {'json': out_dir / 'robustness.json', 'markdown': out_dir / 'robustness.md',
             'png': out_dir / 'robustness.png'}
    paths = {k: str(v) for k, v in files.items()}
    write_atomic(files['markdown'], markdown(report).encode('utf-8'))
    plot(report, files['png'])
    full = dict(report, files=paths)
    write_atomic(files['json'], (json.dumps(full, indent=1, sort_keys=True) + '\n').encode())
    return paths


def _cell(value) -> str:
    """A table cell: numbers with 3 significant digits, None as a dash."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return '-'
    if isinstance(value, float):
        return f'{value:.3g}'
    return str(value)


def markdown(report: dict) -> str:
    """A table per kind of point with its figures and verdicts, after the box."""
    metric = primary_metric(report)
    word = 'PASS' if report['passed'] else 'FAIL'
    lines = [f'# Robustness of `{Path(report["policy"]).name}` ({report["task"]}): {word}', '',
             f'{report["episodes_per_point"]} episodes per point, seed {report["seed"]}, '
             f'backend {report["backend"]}; corners: {report["corner_design"]}. Points not '
             'pinned draw every parameter as in training.', '',
             '| parameter | trained range | nominal | unit | source |',
             '| --- | --- | --- | --- | --- |']
    for b in report['box']:
        source = (b['source'].splitlines() or [''])[0].replace('|', '/')
        lines.append(f'| {b["name"]} | {_cell(b["low"])} - {_cell(b["high"])} | '
                     f'{_cell(b["nominal"])} | {b["unit"]} | {source} |')
    for text in report.get('resolution_warnings', []):
        lines += ['', f'**Too few episodes per point**: {text}.']
    lines += ['', 'Floors: ' + '; '.join(
        f'{kind}: ' + ', '.join(f'{f["metric"]} {f["op"]} {f["value"]:g}' for f in floors)
        for kind, floors in report['floors'].items()), '']
    extra = [k for k in ('position_error_m', 'lin_vel_error_mps', 'fall_rate')
             if k != metric and any(p.get(k) is not None for p in report['points'])]
    for kind in ('nominal', 'edge', 'corner', 'past_edge'):
        rows = [p for p in report['points'] if p['kind'] == kind]
        if not rows:
            continue
        ci = f'{metric}_ci95'
        lines += [f'## {kind} ({sum(r["passed"] for r in rows)} of {len(rows)} pass)', '',
                  f'| point | {metric} | 95 % interval | ' + ' | '.join(extra) + ' | verdict |',
                  '| --- | --- | --- | ' + ' | '.join('---' for _ in extra) + ' | --- |']
        for r in sorted(rows, key=lambda r: _order(r, metric)):
            interval = (f'{r[ci][0]:.2f} - {r[ci][1]:.2f}' if r.get(ci) else '-')
            cells = ' | '.join(_cell(r.get(k)) for k in extra)
            lines.append(f'| {r["label"]} | {_cell(r.get(metric))} | {interval} | {cells} | '
                         f'{"pass" if r["passed"] else "**FAIL**"} |')
        lines.append('')
    return '\n'.join(lines)


def _order(row: dict, metric: str) -> float:
    """Worst first: lowest success, highest fall rate."""
    value = row.get(metric)
    if value is None:
        return math.inf
    return value if metric == 'success_rate' else -value


def plot(report: dict, path: Path) -> Path:
    """Metric against each parameter (trained range shaded, edges marked, floors dashed),
    and the corners sorted from worst to best."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    metric = primary_metric(report)
    box = report['box']
    cols = min(4, len(box) + 1)
    rows = math.ceil((len(box) + 1) / cols)
    fig = Figure(figsize=(3.6 * cols, 3.0 * rows), dpi=80)
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    floors = {k: [f for f in v if f['metric'] == metric] for k, v in report['floors'].items()}
    nominal = next((p for p in report['points'] if p['kind'] == 'nominal'), None)
    for ax, b in zip(axes, box):
        pts = [p for p in report['points'] if p['kind'] in ('edge', 'past_edge')
               and list(p['pins']) == [b['name']] and p.get(metric) is not None]
        pts.sort(key=lambda p: p['pins'][b['name']])
        ax.axvspan(b['low'], b['high'], color='tab:green', alpha=0.12, label='trained')
        for edge in (b['low'], b['high']):
            ax.axvline(edge, color='tab:green', lw=1)
        xs = [p['pins'][b['name']] for p in pts]
        ax.plot(xs, [p[metric] for p in pts], 'o-', color='tab:blue')
        for p in pts:
            if not p['passed']:
                ax.plot(p['pins'][b['name']], p[metric], 'x', color='tab:red', ms=10)
        if nominal is not None and nominal.get(metric) is not None:
            ax.plot(b['nominal'], nominal[metric], 's', color='black', label='nominal')
        for kind, style in (('edge', '--'), ('past_edge', ':')):
            for f in floors.get(kind, []):
                ax.axhline(f['value'], color='gray', ls=style, lw=1)
        ax.set_title(b['name'], fontsize='medium')
        ax.set_xlabel(b['unit'], fontsize='small')
        ax.set_ylabel(metric, fontsize='small')
        ax.grid(True, alpha=0.3)
    ax = axes[len(box)]
    corners = sorted((p[metric] for p in report['points']
                      if p['kind'] == 'corner' and p.get(metric) is not None),
                     reverse=metric != 'success_rate')
    ax.plot(range(len(corners)), corners, '.', color='tab:purple')
    for f in floors.get('corner', []):
        ax.axhline(f['value'], color='gray', ls='--', lw=1)
    ax.set_title(f'{len(corners)} corners, worst first', fontsize='medium')
    ax.set_xlabel('corner (sorted)', fontsize='small')
    ax.set_ylabel(metric, fontsize='small')
    ax.grid(True, alpha=0.3)
    for extra in axes[len(box) + 1:]:
        extra.set_visible(False)
    word = 'pass' if report['passed'] else 'FAIL'
    fig.suptitle(f'{Path(report["policy"]).name} ({report["task"]}): {word}; dashed: floor at '
                 'edges and corners, dotted: 1.25x past', fontsize='medium')
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format='png')
    return path
