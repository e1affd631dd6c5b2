"""A variant of the simulated robot: physical parameters of the training's randomization box
set on the twin by the box's own names, inside the box or past its edges.

A robot's bridge declares a Knob per box parameter (``RobotBridge.variant``): how the value
reaches the twin's model, actuator, command or sensor path, or why the twin cannot take it.
The variant reaches the bridge as one parameter, ``variant`` (a YAML or JSON mapping of box
names to values, '' for none), beside ``policy_tick_s`` and ``policy_substep_s`` (the
policy's period and its training physics step, which a delay in ticks or steps needs).
"""

from __future__ import annotations

from dataclasses import dataclass
import difflib
import math
from typing import Callable

import yaml

DEFAULTS = {'variant': '', 'policy_tick_s': 0.0, 'policy_substep_s': 0.0}
"""Bridge parameters: the variant (box name -> value) and the policy's period and training
physics step [s] (0: not known; a delay counted in them is then refused)."""
COMMAND_DELAY, SENSOR_DELAY = 'command_delay', 'sensor_delay'
"""Knob.effect: each command held back before the twin applies it; every sensor message
held back before it is published (added to the bridge's sensor_latency_s)."""


class VariantError(ValueError):
    """A variant the twin cannot take: an unknown name, a value out of range, a parameter
    the twin does not model."""


@dataclass(frozen=True)
class Knob:
    """One box parameter as the twin takes it."""

    set: Callable[[object, float], None] | None = None
    """set(sim, value): the value on the twin's model or actuator (None: an effect, or
    unmodelled)."""
    minimum: float = 0.0
    """Smallest value the twin takes (refused itself when exclusive)."""
    exclusive: bool = True
    """Whether the minimum itself is refused (a scale must be > 0, a delay may be 0)."""
    integer: bool = False
    """A count (of ticks, of physics steps)."""
    effect: str = ''
    """COMMAND_DELAY or SENSOR_DELAY: the value is a delay counted in `unit`s."""
    unit: str = ''
    """'tick' (the policy's period) or 'substep' (its training physics step)."""
    unmodelled: str = ''
    """Why the twin does not take this parameter ('' when it does)."""


def scale(minimum: float = 0.0, **kwargs) -> Knob:
    """A multiplier of a nominal value: > 0."""
    return Knob(minimum=minimum, **kwargs)


def delay(effect: str, unit: str) -> Knob:
    """A whole number >= 0 of ticks or physics steps by which commands or sensor messages
    are held back."""
    return Knob(minimum=0.0, exclusive=False, integer=True, effect=effect, unit=unit)


def unmodelled(why: str) -> Knob:
    """A box parameter the twin does not take, and why."""
    return Knob(unmodelled=why)


def parse(text: str) -> dict[str, float]:
    """The variant parameter's mapping (YAML or JSON; '' for none); VariantError when it is
    not a mapping of names to numbers."""
    if not text.strip():
        return {}
    try:
        values = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise VariantError(f'variant: not YAML ({exc})') from None
    if not isinstance(values, dict):
        raise VariantError('variant: expected a mapping of box parameters to values, got '
                           f'{type(values).__name__}')
    out = {}
    for name, value in values.items():
        if isinstance(value, str):   # YAML 1.1 reads 9e-1 (no dot) as a string
            try:
                value = float(value)
            except ValueError:
                pass
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise VariantError(f'variant {name}: {value!r} is not a number')
        out[str(name)] = float(value)
    return out


def check(values: dict[str, float], knobs: dict[str, Knob], robot: str) -> None:
    """Raise VariantError naming the first name the robot's twin does not know (with the
    closest), a parameter it does not model (and why) or a value it cannot take."""
    for name, value in values.items():
        knob = knobs.get(name)
        if knob is None:
            close = difflib.get_close_matches(name, list(knobs), n=1, cutoff=0.5)
            raise VariantError(
                f'variant {name}: not a box parameter of the {robot}'
                + (f'; did you mean "{close[0]}"?' if close else '')
                + f' (known: {", ".join(sorted(knobs))})')
        if knob.unmodelled:
            raise VariantError(f'variant {name}: the {robot} twin does not model it: '
                               f'{knob.unmodelled}')
        low_ok = value > knob.minimum if knob.exclusive else value >= knob.minimum
        if not (math.isfinite(value) and low_ok):
            raise VariantError(f'variant {name}={value:g}: must be a finite number '
                               f'{">" if knob.exclusive else ">="} {knob.minimum:g}')
        if knob.integer and value != round(value):
            raise VariantError(f'variant {name}={value:g}: must be a whole number')


def seconds(value: float, knob: Knob, p: dict) -> float:
    """A delay knob's value in seconds (policy ticks or training physics steps)."""
    unit_s = p[f'policy_{knob.unit}_s']
    if unit_s <= 0:
        raise VariantError(f'variant: a delay in {knob.unit}s needs bridge parameter '
                           f'policy_{knob.unit}_s (sim2real hil sets it from the contract)')
    return value * unit_s


def delays(p: dict, knobs: dict[str, Knob]) -> dict[str, float]:
    """The delays the variant in p (the bridge parameters) asks for [s], by effect
    (COMMAND_DELAY, SENSOR_DELAY); VariantError as check() and seconds() raise it."""
    values = parse(p['variant'])
    check(values, knobs, p['robot'])
    out = {COMMAND_DELAY: 0.0, SENSOR_DELAY: 0.0}
    for name, value in values.items():
        if knobs[name].effect:
            out[knobs[name].effect] += seconds(value, knobs[name], p)
    return out


def apply(sim, p: dict, knobs: dict[str, Knob]) -> dict[str, float]:
    """Set the variant in p (the bridge parameters) on the twin's model and actuator; the
    values it gives, by box name (the ground truth; delays are the bridge's, delays())."""
    values = parse(p['variant'])
    check(values, knobs, p['robot'])
    model = [name for name in values if not knobs[name].effect]
    for name in model:
        knobs[name].set(sim, values[name])
    if model:
        set_const(sim)
    return values


def set_const(sim) -> None:
    """Recompute the model's derived constants (subtree masses, inverse weights) after a
    change of masses or inertias."""
    import mujoco
    mujoco.mj_setConst(sim.model, mujoco.MjData(sim.model))


def scale_field(field: str, ids: Callable[[object], object], column=None) -> Callable:
    """set(sim, value): a model field's entries at ids(sim) (and column) x value."""
    def set_(sim, value: float) -> None:
        array = getattr(sim.model, field)
        key = ids(sim) if column is None else (ids(sim), column)
        array[key] = array[key] * value
    return set_


def write_field(field: str, ids: Callable[[object], object], column=None) -> Callable:
    """set(sim, value): value written into a model field's entries at ids(sim) (and
    column)."""
    def set_(sim, value: float) -> None:
        array = getattr(sim.model, field)
        array[ids(sim) if column is None else (ids(sim), column)] = value
    return set_


def joint_scale(name: str) -> Callable:
    """set(sim, value) of a joint twin's PD: its actuator's kp_scale or kd_scale."""
    def set_(sim, value: float) -> None:
        getattr(sim.driver.actuator, name)[:] = value
    return set_


def joint_strength(sim, value: float) -> None:
    """A joint twin's motor strength (torque constant) x value; MuJoCo's ctrl and joint force
    ranges widen with a stronger motor, as the training scenes widen them for their box."""
    sim.driver.actuator.strength[:] = value
    if value > 1.0:
        info = sim.info
        sim.model.actuator_ctrlrange[info.actuator_ids] *= value
        joints = [sim.model.joint(name).id for name in info.joint_names]
        sim.model.jnt_actfrcrange[joints] *= value
