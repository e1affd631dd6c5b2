"""Shared pytest configuration for the sim2real suite (markers live in setup.cfg)."""

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope='session')
def repo_root():
    """Return the root of the source checkout."""
    return REPO_ROOT
