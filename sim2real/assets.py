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
    """A URDF by name (urdf/<name>.urdf in the asset folders) or by path, with or without
    its .urdf suffix; FileNotFoundError listing every file tried."""
    stem = name[:-len('.urdf')] if name.endswith('.urdf') else name
    if '/' in name or os.sep in name:
        candidates = [Path(stem + '.urdf').expanduser()]
        if stem == name:
            candidates.append(Path(name).expanduser())
    else:
        candidates = [Path(name)] if name != stem else []
        candidates += [d / f'{stem}.urdf' for d in asset_dirs('urdf')]
    for path in candidates:
        if path.is_file():
            return path
    tried = ', '.join(str(c) for c in candidates)
    raise FileNotFoundError(f'no URDF {name!r}: tried {tried}')
