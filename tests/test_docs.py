"""The README is a front page and the documentation site builds strict, with a CLI reference
generated from the parser and a results page generated from the policy cards."""

import html
import importlib.util
import os
from pathlib import Path
import re
import subprocess
import sys

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / 'docs'
README = ROOT / 'README.md'
MAX_README_LINES = 150
DATE = re.compile(r'\b20\d\d-\d\d-\d\d\b')
COMMIT = re.compile(r'\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b')
"""A commit hash: 7 to 40 hex digits with at least one letter and one digit."""
LINK_TARGET = re.compile(r'\]\([^)]*\)')
LINK = re.compile(r'\[[^\]]*\]\(([^)\s]+)\)')


def _gen_pages():
    """docs/gen_pages.py as a module (its page builders, without writing a site)."""
    spec = importlib.util.spec_from_file_location('gen_pages', DOCS / 'gen_pages.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _written_docs() -> list[Path]:
    """The README and every hand-written page of the site."""
    return [README, *sorted(DOCS.rglob('*.md'))]


def _nav_pages(nav) -> list[str]:
    """Every page path named in an mkdocs nav (nested lists and dicts)."""
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in _nav_pages(value)]
    return [page for item in nav for page in _nav_pages(item)]


def _config() -> dict:
    """mkdocs.yml."""
    return yaml.safe_load((ROOT / 'mkdocs.yml').read_text(encoding='utf-8'))


def _generated_pages(gen) -> set[str]:
    """The pages docs/gen_pages.py writes."""
    return {'cli.md', 'results/index.md'} | {f'results/{c.stem}.md' for c in gen.cards()}


def test_readme_is_a_short_front_page():
    """The README has at most 150 lines."""
    lines = README.read_text(encoding='utf-8').splitlines()
    assert len(lines) <= MAX_README_LINES, f'README.md has {len(lines)} lines'


@pytest.mark.parametrize('path', _written_docs(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_dates_or_commit_hashes(path):
    """The README and the written pages hold no date and no commit hash outside link
    targets: history lives in git, figures in the cards and benchmark output."""
    text = LINK_TARGET.sub('](...)', path.read_text(encoding='utf-8'))
    assert not DATE.findall(text), f'{path.name}: dates {DATE.findall(text)}'
    assert not COMMIT.findall(text), f'{path.name}: commit hashes {COMMIT.findall(text)}'


@pytest.mark.parametrize('path', sorted((ROOT / 'policies').glob('*.md')),
                         ids=lambda p: p.name)
def test_policy_cards_hold_no_dated_diary(path):
    """A card records how its file was made (its commit may be named) and what it measures,
    not a diary of dated tries."""
    text = path.read_text(encoding='utf-8')
    assert not DATE.findall(text), f'{path.name}: dates {DATE.findall(text)}'


def test_readme_links_resolve():
    """Every relative link of the README names a file of the checkout."""
    targets = [t for t in LINK.findall(README.read_text(encoding='utf-8'))
               if not re.match(r'[a-z]+:', t) and not t.startswith('#')]
    assert targets
    missing = [t for t in targets if not (ROOT / t.split('#')[0]).exists()]
    assert not missing, f'README links to missing files: {missing}'


def test_every_nav_page_exists():
    """Each page of mkdocs.yml's nav is a file under docs/ or one the gen script writes."""
    pages = _nav_pages(_config()['nav'])
    generated = _generated_pages(_gen_pages())
    missing = [p for p in pages if not (DOCS / p).is_file() and p not in generated]
    assert not missing, f'nav pages that do not exist: {missing}'
    assert len(pages) == len(set(pages)), 'a page is listed twice in the nav'


def test_every_page_and_card_is_in_the_nav():
    """Every written page and every policy card's results page is listed in the nav."""
    nav = set(_nav_pages(_config()['nav']))
    written = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob('*.md')}
    missing = sorted((written | _generated_pages(_gen_pages())) - nav)
    assert not missing, f'pages missing from the nav in mkdocs.yml: {missing}'


def test_cli_reference_holds_every_help_text():
    """The generated CLI page holds the --help of sim2real and of every sub-command."""
    gen = _gen_pages()
    parsers = gen.command_parsers()
    assert len(parsers) > 5
    page = gen.cli_markdown()
    for title, parser in parsers:
        assert f'## {title}\n' in page
        assert gen.help_text(parser).rstrip('\n') in page, f'{title} --help missing'


def test_results_index_has_a_row_per_card():
    """The generated results page has a row per policy card with its evaluated figures."""
    gen = _gen_pages()
    page = gen.results_index()
    for card in gen.cards():
        figures = gen.card_figures(card.read_text(encoding='utf-8'))
        assert figures, f'{card.name}: no evaluation JSON block'
        assert f'[`{card.stem}.onnx`]({card.stem}.md)' in page
        assert gen.headline(figures) in page


def test_site_builds_strict(tmp_path):
    """mkdocs build --strict passes, and the built CLI page shows every sub-command's help."""
    site = tmp_path / 'site'
    env = dict(os.environ, NO_MKDOCS_2_WARNING='1', DISABLE_MKDOCS_2_WARNING='true')
    proc = subprocess.run([sys.executable, '-m', 'mkdocs', 'build', '--strict', '--quiet',
                           '--site-dir', str(site)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    built = html.unescape((site / 'cli' / 'index.html').read_text(encoding='utf-8'))
    gen = _gen_pages()
    for title, parser in gen.command_parsers():
        text = gen.help_text(parser).rstrip('\n')
        assert text in built, f'{title} --help missing from the built CLI page'
    assert (site / 'results' / 'index.html').is_file()
    for card in gen.cards():
        assert (site / 'results' / card.stem / 'index.html').is_file()
