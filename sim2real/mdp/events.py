"""Generic randomization events over per-simulation model fields.

Each draw is relative to the model's DEFAULT value (captured on first use), so repeated
resets never drift: 'scale' multiplies it, 'add' offsets it, 'abs' replaces it.
"""

from __future__ import annotations

import torch

from sim2real.mdp.ranges import sample_int_range, sample_range

_OPERATIONS = ('scale', 'add', 'abs')


def sample_uniform(env, low: float, high: float, shape: tuple) -> torch.Tensor:
    """U(low, high) samples from the env's generator, float64."""
    return low + (high - low) * torch.rand(shape, generator=env.rng, dtype=torch.float64)


def apply_operation(default: torch.Tensor, sample: torch.Tensor, operation: str):
    """Combine a field's default value with a sample by operation."""
    if operation == 'scale':
        return default * sample
    if operation == 'add':
        return default + sample
    if operation == 'abs':
        return sample.expand_as(default).clone()
    raise ValueError(f'unknown operation "{operation}", expected one of {_OPERATIONS}')


def randomize_body_field(env, env_ids: torch.Tensor, field: str, body: int,
                         value_range: tuple[float, float], operation: str = 'scale',
                         per_axis: bool = False) -> None:
    """Randomize model field[body] (e.g. body_mass, body_inertia) of env_ids."""
    values = env.scene.backend.expand(field)
    defaults = field_defaults(env, field, values)
    default = defaults[env_ids, body]
    width = default.shape[1] if (per_axis and default.dim() > 1) else 1
    shape = (len(env_ids), width) if default.dim() > 1 else (len(env_ids),)
    sample = sample_range(env, env_ids, value_range, shape)
    values[env_ids, body] = apply_operation(default, sample, operation).to(values.dtype)
    env.scene.backend.set_const(env_ids)


def field_defaults(env, field: str, values: torch.Tensor) -> torch.Tensor:
    """Default (unrandomized) values of a field, stored on the scene at first use."""
    store = env.scene.__dict__.setdefault('_field_defaults', {})
    if field not in store:
        store[field] = values.clone()
    return store[field]


def randomize_encoder_bias(env, env_ids: torch.Tensor, bias_rad: float) -> None:
    """Per-joint encoder offset ~ U(-bias, bias) [rad] into the scene's encoder_bias_rad, which
    its measured joint positions add."""
    shape = (len(env_ids), env.scene.encoder_bias_rad.shape[1])
    env.scene.encoder_bias_rad[env_ids] = sample_uniform(env, -bias_rad, bias_rad, shape).float()


def randomize_joint_sensor_age(env, env_ids: torch.Tensor,
                               age_substeps: tuple[int, int]) -> None:
    """Per-env age of the joint readings at a control tick ~ U{range} [physics steps] into the
    scene's joint_sensor_age_substeps: a servo bus read before the tick, not on it."""
    env.scene.joint_sensor_age_substeps[env_ids] = sample_int_range(env, env_ids, age_substeps)


def randomize_pd_gains(env, env_ids: torch.Tensor, kp_scale: tuple[float, float],
                       kd_scale: tuple[float, float]) -> None:
    """Per-joint Kp and Kd multipliers ~ U(range) of the scene's joint actuator (drive gain
    and damping spread)."""
    act = env.scene.actuator
    shape = (len(env_ids), act.num_joints)
    act.kp_scale[env_ids] = sample_range(env, env_ids, kp_scale, shape)
    act.kd_scale[env_ids] = sample_range(env, env_ids, kd_scale, shape)
