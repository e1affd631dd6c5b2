"""The recorded Isaac Lab run (fixtures/isaaclab_go2class_flat) and edited copies of it."""

import shutil
from pathlib import Path

FIXTURE = Path(__file__).resolve().parent / 'fixtures' / 'isaaclab_go2class_flat'
"""A real Isaac Lab 3.0 run of urdf/quadruped.urdf (fixtures/make_isaaclab_run.py)."""


def edited_run(tmp_path: Path, old: str, new: str, file: str = 'env.yaml') -> Path:
    """A copy of the fixture under tmp_path with one text edit in params/<file>."""
    run = tmp_path / 'run'
    shutil.copytree(FIXTURE, run)
    path = run / 'params' / file
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))
    return run
