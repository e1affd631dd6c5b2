"""Locate robot descriptions shipped with sim2real, in a source checkout or an install."""

import os
import sys
from pathlib import Path


def asset_dirs(kind: str) -> list[Path]:
    """Candidate folders for an asset kind ('urdf', 'config', 'launch'), first match wins."""
    package_dir = Path(__file__).resolve().parent
    dirs = []
    if (package_dir.parent / 'package.xml').is_file():
        dirs.append(package_dir.parent / kind)                      # checkout, editable install
    dirs.append(package_dir.parent / 'share' / 'sim2real' / kind)   # pip install --target T
    dirs.append(package_dir.parents[2] / 'share' / 'sim2real' / kind)  # <prefix>/lib/pythonX.Y
    dirs.append(Path(sys.prefix) / 'share' / 'sim2real' / kind)     # pip install .
    for prefix in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep):
        if prefix:
            dirs.append(Path(prefix) / 'share' / 'sim2real' / kind)  # colcon install
    return dirs


def urdf_path(name: str) -> Path:
    """Path of urdf/<name>.urdf; raises FileNotFoundError listing the folders searched."""
    candidates = [d / f'{name}.urdf' for d in asset_dirs('urdf')]
    for path in candidates:
        if path.is_file():
            return path
    searched = ', '.join(str(c) for c in candidates)
    raise FileNotFoundError(f'no URDF named {name!r}; searched {searched}')


def resolve_urdf(urdf_file: str) -> Path:
    """A path (contains '/' or ends in .urdf) as is, else urdf/<name>.urdf (see urdf_path)."""
    if '/' in urdf_file or urdf_file.endswith('.urdf'):
        return Path(urdf_file)
    return urdf_path(urdf_file)
