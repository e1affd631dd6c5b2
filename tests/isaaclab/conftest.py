"""The Isaac Lab stage runs where SIM2REAL_ISAACLAB_PYTHON names the Isaac Lab venv (`make
isaaclab-stage`, part of `make test`, sets it); a plain pytest run elsewhere skips these
tests and says why."""

import os
from pathlib import Path

import pytest

from sim2real.interop.isaaclab_task import PYTHON_ENV_VAR

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config, items):
    """Skip this folder's tests when no Isaac Lab venv is named."""
    if os.environ.get(PYTHON_ENV_VAR):
        return
    skip = pytest.mark.skip(reason=f'Isaac Lab stage: {PYTHON_ENV_VAR} is not set (make '
                                   'isaaclab-stage sets it)')
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(skip)
