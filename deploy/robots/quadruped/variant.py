"""The quadruped twin's variant knobs: its randomization box (tasks/quadruped/cfg.py) by name,
set as the training's events set them (foot friction absolute, a payload added to the trunk,
leg link masses scaled, PD gain scales and motor strength on the driver's actuator)."""

import numpy as np

from sim2real.deploy.bridge.variant import (
    COMMAND_DELAY, delay, joint_scale, joint_strength, Knob, scale, scale_field,
    SENSOR_DELAY, unmodelled, write_field)


def _feet(sim) -> np.ndarray:
    """The four foot geoms."""
    return np.asarray(sim.info.foot_geom_ids)


def _links(sim) -> np.ndarray:
    """Every body but the world and the trunk: hips, thighs, calves, feet."""
    return np.array([b for b in range(1, sim.model.nbody) if b != sim.info.base_body_id])


def _payload(sim, value: float) -> None:
    """value [kg] added to the trunk (negative: lighter), refused when it leaves none."""
    from sim2real.deploy.bridge.variant import VariantError
    base = sim.info.base_body_id
    mass = float(sim.model.body_mass[base]) + value
    if mass <= 0:
        raise VariantError(f'variant payload_kg={value:g}: leaves the trunk '
                           f'{mass:.3g} kg (it weighs {mass - value:.3g} kg)')
    sim.model.body_mass[base] = mass


def knobs() -> dict[str, Knob]:
    """Box name -> how the twin takes it."""
    return {
        'foot_friction': scale(set=write_field('geom_friction', _feet, 0)),
        'payload_kg': Knob(set=_payload, minimum=-np.inf),
        'link_mass_scale': scale(set=scale_field('body_mass', _links)),
        'kp_scale': scale(set=joint_scale('kp_scale')),
        'kd_scale': scale(set=joint_scale('kd_scale')),
        'motor_strength': scale(set=joint_strength),
        'action_delay_ticks': delay(COMMAND_DELAY, 'tick'),
        'observation_delay_ticks': delay(SENSOR_DELAY, 'tick'),
        'observation_dropout': unmodelled(
            "lost messages are the bridge's drop fault (--faults drop, "
            'fault_drop_probability), not a property of the robot'),
    }
