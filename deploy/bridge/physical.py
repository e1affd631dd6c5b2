"""The simulated robot's true physical parameters, set away from the nominal model on purpose.

A HIL run can put the twin outside the box the policy trained in (a heavier vehicle, a
payload on a quadruped's trunk, a heavier object in a hand) to see what the node and its
out-of-distribution flags make of it. The change applies to the model's first floating body
(the one with a free joint: the quadrotor, the quadruped's trunk, the hand's object).
"""

from __future__ import annotations

import mujoco
import numpy as np

DEFAULTS = {'base_mass_scale': 1.0, 'base_payload_kg': 0.0}
"""Bridge parameters: the floating body's mass and inertia x base_mass_scale, then
base_payload_kg added as a point mass at its centre of mass."""


def floating_body(model: mujoco.MjModel) -> int:
    """Id of the first body with a free joint; ValueError when the model has none."""
    free = np.flatnonzero(model.jnt_type == mujoco.mjtJoint.mjJNT_FREE)
    if not len(free):
        raise ValueError('the model has no floating body')
    return int(model.jnt_bodyid[free[0]])


def change_mass(model: mujoco.MjModel, mass_scale: float, payload_kg: float) -> dict:
    """Scale the floating body's mass and inertia, then add payload_kg at its centre of mass
    (a point mass: no inertia of its own); returns its name and mass before and after [kg]."""
    body = floating_body(model)
    before = float(model.body_mass[body])
    model.body_mass[body] = before * mass_scale + payload_kg
    model.body_inertia[body] *= mass_scale
    return {'body': model.body(body).name, 'nominal_mass_kg': before,
            'true_mass_kg': float(model.body_mass[body])}


def checks(p: dict) -> list:
    """(name, ok, why) of the parameters."""
    return [('base_mass_scale', p['base_mass_scale'] > 0, 'must be > 0'),
            ('base_payload_kg', p['base_payload_kg'] >= 0, 'must be >= 0')]
