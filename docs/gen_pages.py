"""Pages the docs site generates at build time (mkdocs-gen-files runs this file).

- ``cli.md``: the ``--help`` of ``sim2real`` and of every sub-command, taken from
  ``sim2real.cli.main.build_parser()``, so a new command or flag appears without an edit here.
- ``results/index.md`` and ``results/<card>.md``: every policy card of ``policies/*.md``,
  copied, with a table of the figures of each card's evaluation JSON; the robustness reports
  and plots the cards link are copied beside them.

The functions return text, so ``tests/test_docs.py`` checks the pages without a build. A new
card needs its line under "Results" in ``mkdocs.yml``'s nav (a test says so).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
POLICIES = ROOT / 'policies'
HELP_COLUMNS = '100'
"""Terminal width the help text is formatted for, so the page does not depend on the shell."""
HEADLINE_KEYS = (
    ('success_rate', 'success {:.3f}'),
    ('position_error_m', 'position error {:.3f} m'),
    ('position_error_p95_m', 'p95 {:.3f} m'),
    ('fall_rate', 'falls {:.1%}'),
    ('lin_vel_error_mps', 'velocity error {:.3f} m/s'),
    ('yaw_rate_error_radps', 'yaw-rate error {:.3f} rad/s'),
    ('rotation_rad_per_10s', '{:.2f} rad per 10 s'),
    ('drop_rate', 'drops {:.1%}'),
    ('guard_rate', 'guard stops {:.1%}'),
)
"""Evaluation keys shown in the results table, in order, with their format."""
LINK = re.compile(r'(!?)\[([^\]]*)\]\(([^)\s]+)\)')
JSON_BLOCK = re.compile(r'```json\n(.*?)\n```', re.S)
SHA256_ROW = re.compile(r'^\| sha256 \| `([0-9a-f]{64})`', re.M)


def command_parsers() -> list[tuple[str, object]]:
    """(title, parser) of `sim2real` and of each sub-command, in the parser's order."""
    os.environ['COLUMNS'] = HELP_COLUMNS
    import argparse
    from sim2real.cli.main import build_parser
    parser = build_parser()
    found = [('sim2real', parser)]
    seen = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if id(sub) not in seen:   # an alias maps to the same parser
                    seen.add(id(sub))
                    found.append((f'sim2real {name}', sub))
    return found


def help_text(parser) -> str:
    """The parser's --help at the fixed width."""
    os.environ['COLUMNS'] = HELP_COLUMNS
    return parser.format_help()


def cli_markdown() -> str:
    """The CLI reference page: one heading and one text block per command."""
    parsers = command_parsers()
    lines = [
        '# Command-line reference',
        '',
        'Generated from the argument parser (`sim2real.cli.main.build_parser()`) each time '
        'the site is built; `sim2real <command> --help` prints the same text. The console '
        'script `sim2real` is also `python -m sim2real.cli.main`, which is how `torchrun` '
        'starts it (see [Scaling out](scale_out.md)). The ROS 2 executables `policy_node` '
        'and `sim_bridge` take ROS parameters instead of flags: see [Deploy](deploy/index.md).',
        '',
        'Commands that judge (`eval`, `robustness`, `hil`) end with a `verdict` line on stderr '
        'and exit 1 when it fails; errors exit 2 with one line on stderr '
        '([Evaluation](evaluation.md#verdicts-and-exit-status)).',
        '',
        'Commands: ' + ', '.join(f'[`{title}`](#{_anchor(title)})' for title, _ in parsers[1:]),
        '',
    ]
    for title, parser in parsers:
        lines += [f'## {title}', '', '```text', help_text(parser).rstrip('\n'), '```', '']
    return '\n'.join(lines)


def _anchor(title: str) -> str:
    """The id the toc extension gives the heading `title`."""
    return re.sub(r'[^a-z0-9]+', '-', title.lower()).strip('-')


def cards() -> list[Path]:
    """The policy cards, sorted by name."""
    return sorted(POLICIES.glob('*.md'))


def card_figures(text: str) -> dict:
    """The evaluation JSON of a card (its first json block), or {} if it has none."""
    match = JSON_BLOCK.search(text)
    return json.loads(match.group(1)) if match else {}


def headline(figures: dict) -> str:
    """The evaluated figures of a card as one short phrase."""
    parts = [fmt.format(figures[key]) for key, fmt in HEADLINE_KEYS if key in figures]
    return ', '.join(parts) if parts else 'no evaluation JSON in the card'


def card_page(card: Path) -> tuple[str, list[Path]]:
    """A card's page text and the files under policies/ its links need copied beside it.

    Links into policies/ keep their target (the file is copied under results/); links to
    anything else in the repository become the path as code, which works without a host.
    """
    copies: list[Path] = []

    def rewrite(match: re.Match) -> str:
        """One link of the card, kept or turned into text."""
        bang, label, target = match.groups()
        if re.match(r'[a-z]+:', target) or target.startswith('#'):
            return match.group(0)
        path = (card.parent / target.split('#')[0]).resolve()
        if path.is_file() and POLICIES in path.parents:
            copies.append(path)
            if path.suffix == '.md':   # a report: its plot too, when there is one
                plot = path.with_suffix('.png')
                if plot.is_file():
                    copies.append(plot)
            return match.group(0)
        shown = path.relative_to(ROOT) if ROOT in path.parents else target
        return f'{label} (`{shown}`)' if label and not bang else f'`{shown}`'

    text = LINK.sub(rewrite, card.read_text(encoding='utf-8'))
    plots = [p for p in copies if p.suffix == '.png']
    if plots:
        text = text.rstrip('\n') + '\n\n## Robustness plot\n\n' + '\n\n'.join(
            f'![{card.stem} robustness]({p.relative_to(POLICIES).as_posix()})' for p in plots)
    source = card.relative_to(ROOT).as_posix()
    note = (f'!!! note "Generated page"\n    A copy of `{source}`, the card shipped beside '
            f'`{card.with_suffix(".onnx").name}`; edit the card, not this page.\n\n')
    return note + text + '\n', sorted(set(copies))


def results_index() -> str:
    """The results page: one row per card with its evaluated figures and verdict."""
    lines = [
        '# Results',
        '',
        'Every figure here comes from a policy card in `policies/`, the file shipped beside '
        'each ONNX policy: the command that trained it, the machine, the evaluation JSON, the '
        'HIL run and the robustness sweep. This page is generated from those cards when the '
        'site is built; benchmark figures come from `make bench` '
        '([Benchmarks](../benchmarks.md)).',
        '',
        '| policy | task | episodes | evaluated under full randomization | verdict | sha256 |',
        '| --- | --- | --- | --- | --- | --- |',
    ]
    for card in cards():
        text = card.read_text(encoding='utf-8')
        figures = card_figures(text)
        sha = SHA256_ROW.search(text)
        verdict = figures.get('verdict', {}).get('text', '')
        lines.append(
            f'| [`{card.stem}.onnx`]({card.stem}.md) | `{figures.get("task", "?")}` | '
            f'{figures.get("episodes", "?")} | {headline(figures)} | {verdict} | '
            f'`{sha.group(1)[:12] if sha else "?"}` |')
    lines += [
        '',
        'A task without a row has no shipped policy yet ([Tasks](../tasks.md) says why). '
        'Reproduce a row with `sim2real eval policies/<name>.onnx --episodes N --json` (the '
        "card's episode count; seed 12345 is the default).",
        '',
    ]
    return '\n'.join(lines)


def main() -> None:
    """Write the generated pages into the site being built."""
    import mkdocs_gen_files
    with mkdocs_gen_files.open('cli.md', 'w') as out:
        out.write(cli_markdown())
    with mkdocs_gen_files.open('results/index.md', 'w') as out:
        out.write(results_index())
    for card in cards():
        text, copies = card_page(card)
        with mkdocs_gen_files.open(f'results/{card.stem}.md', 'w') as out:
            out.write(text)
        for path in copies:
            with mkdocs_gen_files.open(f'results/{path.relative_to(POLICIES).as_posix()}',
                                       'wb') as out:
                out.write(path.read_bytes())


if __name__ in ('__main__', '<run_path>'):
    main()
