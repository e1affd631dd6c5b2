"""The simulated robot's true physical parameters, set away from the nominal model on purpose.

A HIL run can put the twin outside the box the policy trained in (a heavier vehicle, a
payload on a quadruped's trunk, a heavier object in a hand) to see what the node and its
out-of-distribution flags make of it. The change applies to the model's first floating body
(the one with a free joint: the quadrotor, the quadruped's trunk, the hand's object).
"""

from __future__ import annotations

import math

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
    (a point mass: no inertia of its own); returns its name and mass before and after [kg].
    The model's derived constants (subtree masses, inverse weights) are recomputed."""
    body = floating_body(model)
    before = float(model.body_mass[body])
    model.body_mass[body] = before * mass_scale + payload_kg
    model.body_inertia[body] *= mass_scale
    mujoco.mj_setConst(model, mujoco.MjData(model))
    return {'body': model.body(body).name, 'nominal_mass_kg': before,
            'true_mass_kg': float(model.body_mass[body])}


def apply(sim, p: dict) -> dict:
    """The bridge parameters' mass change on a simulation's model (change_mass). The
    defaults touch nothing: they give the floating body's mass as true and nominal, or {}
    for a robot without one (a fixed-base arm); a change to a model without one is a
    ValueError naming the parameters."""
    model = getattr(sim, 'model', None)
    if p['base_mass_scale'] == 1.0 and p['base_payload_kg'] == 0.0:
        try:
            body = floating_body(model)
        except (ValueError, AttributeError, TypeError):
            return {}
        mass = float(model.body_mass[body])
        return {'body': model.body(body).name, 'nominal_mass_kg': mass, 'true_mass_kg': mass}
    try:
        return change_mass(model, p['base_mass_scale'], p['base_payload_kg'])
    except (ValueError, AttributeError, TypeError):
        raise ValueError(f'sim_bridge parameters base_mass_scale / base_payload_kg: the '
                         f'{p["robot"]} twin has no floating body (a free joint) to make '
                         'heavier') from None


def checks(p: dict) -> list:
    """(name, ok, why) of the parameters."""
    return [('base_mass_scale', math.isfinite(p['base_mass_scale']) and p['base_mass_scale'] > 0,
             'must be a finite number > 0'),
            ('base_payload_kg', math.isfinite(p['base_payload_kg']) and p['base_payload_kg'] >= 0,
             'must be a finite number >= 0')]
