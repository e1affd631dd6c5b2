"""Packaging: install layout, wheel contents, ROS 2 manifest and setup.cfg conventions."""

import configparser
import importlib.metadata
import json
import os
import re
import runpy
import shutil
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NAME = 'sim2real'
SCRIPT_DIR = '$base/lib/sim2real'
# skipped when copying the checkout: environments, build outputs, run outputs, caches
SKIP_AT_ROOT = {'.git', '.venv', 'build', 'dist', 'runs', '.eggs', '.pytest_cache', '.hypothesis'}
ENTRY_POINT = re.compile(
    r'^(?P<name>[A-Za-z0-9_][A-Za-z0-9_.-]*)\s*=\s*'
    r'(?P<module>[A-Za-z_]\w*(\.[A-Za-z_]\w*)*):(?P<func>[A-Za-z_]\w*(\.[A-Za-z_]\w*)*)$')


def run_setup(project_dir):
    """Execute project_dir/setup.py with setuptools.setup replaced; return its keyword args."""
    import setuptools

    captured = {}
    original = setuptools.setup
    setuptools.setup = lambda **kwargs: captured.update(kwargs)
    try:
        runpy.run_path(str(Path(project_dir) / 'setup.py'), run_name='__main__')
    finally:
        setuptools.setup = original
    return captured


@pytest.fixture(scope='module')
def setup_kwargs():
    """Return the keyword arguments setup.py passes to setuptools.setup."""
    return run_setup(REPO)


def _ignore(directory, names):
    """Tell shutil.copytree what to leave out of the source copy."""
    ignored = {n for n in names if n == '__pycache__' or n.endswith('.egg-info')}
    here = Path(directory).resolve()
    if here == REPO:
        ignored |= SKIP_AT_ROOT & set(names)
    elif here == REPO / 'bench':
        ignored |= {'out'} & set(names)
    return ignored


@pytest.fixture(scope='module')
def source_copy(tmp_path_factory):
    """Return a copy of the checkout, so builds write no build/ or *.egg-info into it."""
    dst = tmp_path_factory.mktemp('src') / 'sim2real-src'
    shutil.copytree(REPO, dst, ignore=_ignore, symlinks=True)
    return dst


def pip(*args, cwd):
    """Run the test interpreter's pip offline; fail with its output if it fails."""
    proc = subprocess.run(
        [sys.executable, '-m', 'pip', *args, '--no-deps', '--no-build-isolation', '--no-index'],
        cwd=cwd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f'pip {args} failed:\n{proc.stdout}\n{proc.stderr}'


def _holds_python(path):
    """Return True for a .py/.so module file or a directory with one at any depth."""
    if path.is_file():
        return path.suffix in ('.py', '.so', '.pyd')
    return any(p.suffix in ('.py', '.so') for p in path.rglob('*') if p.is_file())


def import_locations(cwd, **env):
    """Import sim2real, .tasks, .deploy in a fresh interpreter; return each one's files/paths."""
    script = textwrap.dedent("""
        import json
        import sim2real, sim2real.tasks, sim2real.deploy
        mods = (sim2real, sim2real.tasks, sim2real.deploy)
        print(json.dumps({m.__name__: [p for p in [m.__file__, *m.__path__] if p] for m in mods}))
    """)
    proc = subprocess.run([sys.executable, '-c', script], cwd=cwd, env=dict(os.environ, **env),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_target_install_has_one_top_level_package(source_copy, tmp_path):
    """A non-editable install imports sim2real(.tasks, .deploy) from itself, nothing else top."""
    target = tmp_path / 'target'
    pip('install', '--target', str(target), '.', cwd=source_copy)

    top = sorted(
        p.name for p in target.iterdir()
        if p.name.split('.')[0].isidentifier() and not p.name.endswith('-info')
        and p.name not in ('__pycache__', 'share')   # share/: data files (launch/*.py)
        and _holds_python(p))
    assert top == [NAME]
    assert not (target / 'tasks').exists()
    assert not (target / 'deploy').exists()
    (dist_info,) = target.glob(f'{NAME}-*.dist-info')
    top_level = dist_info / 'top_level.txt'
    if top_level.exists():
        assert top_level.read_text().split() == [NAME]

    outside = tmp_path / 'elsewhere'
    outside.mkdir()
    locations = import_locations(outside, PYTHONPATH=str(target))
    for name, paths in locations.items():
        for path in paths:
            assert Path(path).resolve().is_relative_to(target.resolve()), (name, path)


def test_wheel_ships_every_package_and_ros_share_files(source_copy, tmp_path):
    """The wheel holds all discovered packages under sim2real/ and the ROS files under share/."""
    pip('wheel', '--wheel-dir', str(tmp_path), '.', cwd=source_copy)
    (wheel,) = tmp_path.glob(f'{NAME}-*.whl')
    names = set(zipfile.ZipFile(wheel).namelist())
    version = run_setup(source_copy)['version']
    data = f'{NAME}-{version}.data/data/'

    code = [n for n in names if '.dist-info/' not in n and '.data/' not in n]
    assert code and all(n.startswith(f'{NAME}/') for n in code), sorted(code)
    assert any(n.startswith(f'{NAME}/tasks/') for n in names)
    assert any(n.startswith(f'{NAME}/deploy/') for n in names)

    expected = {
        f'{data}share/ament_index/resource_index/packages/{NAME}',
        f'{data}share/{NAME}/package.xml',
    }
    for share_dir in ('launch', 'urdf', 'config'):
        for path in (source_copy / share_dir).rglob('*'):
            rel = path.relative_to(source_copy)
            if path.is_file() and not any(part.startswith('.') for part in rel.parts):
                expected.add(f'{data}share/{NAME}/{rel.as_posix()}')
    assert expected <= names, sorted(expected - names)


def test_packages_discovered_under_one_import_name(setup_kwargs):
    """setup.py maps tasks/ and deploy/ into sim2real and lists only sim2real packages."""
    packages = setup_kwargs['packages']
    assert {NAME, f'{NAME}.tasks', f'{NAME}.deploy'} <= set(packages)
    assert all(p == NAME or p.startswith(f'{NAME}.') for p in packages), packages
    assert setup_kwargs['package_dir'] == {
        NAME: NAME, f'{NAME}.tasks': 'tasks', f'{NAME}.deploy': 'deploy'}
    for package in packages:
        assert '__pycache__' not in package


def test_discovery_picks_up_new_subpackages_and_skips_empty_dirs(tmp_path):
    """New subpackages are found without editing setup.py; empty directories are skipped."""
    for rel in ('setup.py', 'README.md', 'package.xml', 'resource/sim2real'):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / rel, tmp_path / rel)
    for rel in ('sim2real/__init__.py', 'sim2real/newcore/__init__.py',
                'tasks/__init__.py', 'tasks/newtask/env.py', 'deploy/__init__.py'):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text('')
    (tmp_path / 'tasks' / 'in_progress').mkdir()
    (tmp_path / 'urdf').mkdir()
    (tmp_path / 'urdf' / 'quad.urdf').write_text('<robot name="quad"/>')

    kwargs = run_setup(tmp_path)
    assert sorted(kwargs['packages']) == [
        'sim2real', 'sim2real.deploy', 'sim2real.newcore', 'sim2real.tasks',
        'sim2real.tasks.newtask']
    assert ('share/sim2real/urdf', ['urdf/quad.urdf']) in kwargs['data_files']


def test_mapped_package_roots_are_regular_packages(setup_kwargs):
    """sim2real/, tasks/ and deploy/ each have an __init__.py (editable installs need it)."""
    # setuptools' editable finder resolves a package_dir-mapped package only through its
    # __init__.py: without one, `import sim2real.tasks` fails in a `pip install -e .` venv.
    missing = [f'{d}/__init__.py' for d in setup_kwargs['package_dir'].values()
               if not (REPO / d / '__init__.py').is_file()]
    assert not missing, f'create {missing}: mapped package roots must be regular packages'


def test_editable_install_imports_mapped_packages_from_the_checkout(tmp_path):
    """In an editable install, sim2real.tasks/.deploy import from tasks/ and deploy/ anywhere."""
    # a sim2real.egg-info in the checkout is a distribution too: look for the installed one
    urls = [json.loads(d.read_text('direct_url.json') or '{}')
            for d in importlib.metadata.distributions(name=NAME)]
    direct_url = next((u for u in urls if u.get('dir_info', {}).get('editable')), {})
    if not direct_url:
        pytest.skip('sim2real is not installed in editable mode in this environment')
    if Path(direct_url['url'].removeprefix('file://')).resolve() != REPO:
        pytest.skip('the editable install points at another checkout')
    locations = import_locations(tmp_path)
    expected = {NAME: NAME, f'{NAME}.tasks': 'tasks', f'{NAME}.deploy': 'deploy'}
    for name, directory in expected.items():
        assert locations[name], name
        for path in locations[name]:
            assert Path(path).resolve().is_relative_to(REPO / directory), (name, path)


def test_package_xml_is_ament_python_format_3(setup_kwargs):
    """package.xml parses as a format-3 ament_python manifest that agrees with setup.py."""
    root = ET.parse(REPO / 'package.xml').getroot()
    assert root.tag == 'package'
    assert root.get('format') == '3'
    assert root.findtext('name') == NAME == setup_kwargs['name']
    assert root.findtext('version') == setup_kwargs['version']
    assert root.findtext('export/build_type') == 'ament_python'
    assert root.findtext('license') == 'Apache-2.0'
    assert root.find('maintainer').get('email')
    exec_depends = {e.text for e in root.findall('exec_depend')}
    assert {'rclpy', 'sensor_msgs', 'std_msgs', 'geometry_msgs', 'nav_msgs', 'std_srvs',
            'diagnostic_msgs', 'python3-numpy', 'pinocchio'} <= exec_depends
    assert {e.text for e in root.findall('test_depend')} >= {'ament_flake8', 'python3-pytest'}


def test_console_scripts_are_module_colon_function(setup_kwargs):
    """Every console script is 'name = sim2real.module.path:function'."""
    scripts = setup_kwargs['entry_points']['console_scripts']
    assert scripts
    for spec in scripts:
        match = ENTRY_POINT.match(spec.strip())
        assert match, spec
        assert match['module'].split('.')[0] == NAME, spec


def test_setup_cfg_puts_scripts_in_lib_sim2real():
    """setup.cfg installs scripts to $base/lib/sim2real for both develop and install (ROS 2)."""
    cfg = configparser.RawConfigParser()
    cfg.read(REPO / 'setup.cfg')
    assert cfg.get('develop', 'script_dir') == SCRIPT_DIR
    assert cfg.get('install', 'install_scripts') == SCRIPT_DIR


def test_flake8_config_matches_ament_style():
    """setup.cfg's flake8 section caps lines at 99 and asks for single inline quotes."""
    cfg = configparser.RawConfigParser()
    cfg.read(REPO / 'setup.cfg')
    assert cfg.getint('flake8', 'max-line-length') == 99
    assert cfg.get('flake8', 'inline-quotes') == 'single'


def test_train_extra_torch_is_a_range_that_admits_the_local_cpu_wheel(setup_kwargs):
    """The train extra asks for a torch range (not a pin) that torch 2.13.0 satisfies."""
    specifiers = pytest.importorskip('packaging.specifiers')
    (torch_req,) = [r for r in setup_kwargs['extras_require']['train'] if r.startswith('torch')]
    spec = specifiers.SpecifierSet(torch_req[len('torch'):])
    assert '2.13.0' in spec
    assert not any(s.operator in ('==', '===') for s in spec)
