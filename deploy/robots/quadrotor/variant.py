"""The quadrotor twin's variant knobs: its randomization box (tasks/quadrotor/cfg.py) by name,
set as the training's events set them (mass and inertia of the body, the rotors' thrust
coefficient and motor time constant; the rate controller keeps the nominal inertia)."""

from sim2real.deploy.bridge.variant import (
    COMMAND_DELAY, delay, Knob, scale, scale_field, unmodelled)
from sim2real.sim.mjcf import BASE_BODY


def _body(sim) -> int:
    """The vehicle's body id."""
    return sim.model.body(BASE_BODY).id


def _thrust(sim, value: float) -> None:
    """All four rotors' thrust coefficient x value (no per-rotor mismatch)."""
    sim.actuator.thrust_scale[:] = value


def _motor_tau(sim, value: float) -> None:
    """The motors' time constant x value."""
    sim.actuator.time_constant_s[:] = sim.rotors.time_constant_s * value


def knobs() -> dict[str, Knob]:
    """Box name -> how the twin takes it."""
    return {
        'mass_scale': scale(set=scale_field('body_mass', _body)),
        'inertia_scale': scale(set=scale_field('body_inertia', _body)),
        'thrust_scale': scale(set=_thrust),
        'motor_tau_scale': scale(set=_motor_tau),
        'action_delay_ticks': delay(COMMAND_DELAY, 'tick'),
        'observation_dropout': unmodelled(
            "lost messages are the bridge's drop fault (--faults drop, "
            'fault_drop_probability), not a property of the robot'),
    }
