"""Shared fixtures of the simulation tests: the shipped quadrotor URDF."""

import pytest


@pytest.fixture(scope='session')
def quad_urdf(repo_root):
    """Path of the shipped Crazyflie-class URDF."""
    return repo_root / 'urdf' / 'quadrotor.urdf'
