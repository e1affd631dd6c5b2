"""Hand reset and randomization events: pure functions of (env, env_ids, **range).

Model fields are drawn relative to their unrandomized values (``sim2real.mdp.events``), so
repeated resets never drift. Ranges and sources are in cfg.py. MuJoCo combines the friction
of two touching geoms by taking the larger: the cube's friction sets the cube-palm contact
(the palm's is 0.2, below every draw) and a fingertip-cube contact wherever it exceeds the
fingertip's, so both draws act (tests/tasks/test_hand_events.py).
"""

from __future__ import annotations

import torch

from sim2real.mdp.events import apply_operation, field_defaults, sample_uniform
from sim2real.mdp.ranges import sample_range


def _hand_dofs(env) -> torch.Tensor:
    """The hand's degrees of freedom (not the cube's), (16,)."""
    return torch.as_tensor(env.scene.info.qvel_adr)


def _randomize_rows(env, env_ids, field: str, index: torch.Tensor, value_range,
                    operation: str, per_item: bool) -> None:
    """field[env, index] = op(default, U(range)) for env_ids, one draw per env or per item."""
    values = env.scene.backend.expand(field)
    defaults = field_defaults(env, field, values)
    rows = env_ids[:, None]
    default = defaults[rows, index]
    shape = (len(env_ids), len(index) if per_item else 1)
    sample = sample_range(env, env_ids, value_range, shape)
    if default.dim() == 3:   # (n, k, width): the draw multiplies every column
        sample = sample[..., None]
    values[rows, index] = apply_operation(default, sample, operation).to(values.dtype)


# -- the cube --------------------------------------------------------------------------------
def randomize_cube(env, env_ids: torch.Tensor, size_scale_range: tuple[float, float],
                   mass_scale_range: tuple[float, float]) -> None:
    """Cube edge = nominal x U(size range): its geom size and collision bounds (bounding
    sphere and box, which MuJoCo's broad phase reads) scale together; mass = nominal x U(mass
    range); inertia = nominal x the mass scale x the size scale squared (a uniform cube:
    I = m a^2 / 6)."""
    scene, info = env.scene, env.scene.info
    size = sample_range(env, env_ids, size_scale_range, (len(env_ids),))
    geom = info.object_geom_id
    for field in ('geom_size', 'geom_rbound', 'geom_aabb'):
        values = scene.backend.expand(field)
        default = field_defaults(env, field, values)[env_ids, geom]
        factor = size if default.dim() == 1 else size[:, None]
        values[env_ids, geom] = (default * factor).to(values.dtype)
    scene.cube_size_scale[env_ids] = size.float()
    mass = sample_range(env, env_ids, mass_scale_range, (len(env_ids),))
    body = info.object_body_id
    for field, scale in (('body_mass', mass), ('body_inertia', mass * size ** 2)):
        values = scene.backend.expand(field)
        default = field_defaults(env, field, values)[env_ids, body]
        factor = scale if default.dim() == 1 else scale[:, None]
        values[env_ids, body] = (default * factor).to(values.dtype)
    scene.backend.set_const(env_ids)


def randomize_cube_com(env, env_ids: torch.Tensor, offset_m: float) -> None:
    """Cube centre of mass = geometric centre + U(-offset, offset) per axis [m]."""
    body = torch.tensor([env.scene.info.object_body_id])
    values = env.scene.backend.expand('body_ipos')
    default = field_defaults(env, 'body_ipos', values)[env_ids[:, None], body]
    offset = sample_uniform(env, -offset_m, offset_m, (len(env_ids), 1, 3))
    values[env_ids[:, None], body] = (default + offset).to(values.dtype)
    env.scene.backend.set_const(env_ids)


def randomize_cube_friction(env, env_ids: torch.Tensor,
                            friction_range: tuple[float, float]) -> None:
    """Cube sliding friction ~ U(range) (absolute)."""
    geom = torch.tensor([env.scene.info.object_geom_id])
    _set_sliding_friction(env, env_ids, geom, friction_range, per_item=False)


def randomize_fingertip_friction(env, env_ids: torch.Tensor,
                                 friction_range: tuple[float, float]) -> None:
    """Sliding friction of the fingertip spheres ~ U(range), one draw per env (absolute)."""
    geoms = torch.as_tensor(env.scene.info.fingertip_geom_ids)
    _set_sliding_friction(env, env_ids, geoms, friction_range, per_item=False)


def _set_sliding_friction(env, env_ids, geoms, friction_range, per_item: bool) -> None:
    """geom_friction[:, 0] of geoms ~ U(range) for env_ids."""
    values = env.scene.backend.expand('geom_friction')
    field_defaults(env, 'geom_friction', values)
    width = len(geoms) if per_item else 1
    mu = sample_range(env, env_ids, friction_range, (len(env_ids), width))
    values[env_ids[:, None], geoms, 0] = mu.expand(-1, len(geoms)).to(values.dtype)


def push_cube(env, env_ids: torch.Tensor, force_per_kg_n: float, prob: float,
              decay_per_s: float, interval_s: float) -> None:
    """HORA's random object forces, an interval event every interval_s (pass the event's own
    interval): the applied force decays by decay_per_s per second; with probability prob a
    new force mass x force_per_kg_n x N(0, 1) per axis [N; world] is added (the cube's mass
    as randomized)."""
    scene, n = env.scene, len(env_ids)
    body = scene.info.object_body_id
    force = scene.backend.xfrc_applied[env_ids, body, :3]
    force *= decay_per_s ** interval_s
    hit = torch.rand(n, generator=env.rng) < prob
    mass = scene.backend.expand('body_mass')[env_ids, body]
    kick = torch.randn(n, 3, generator=env.rng, dtype=torch.float64) * force_per_kg_n
    force += torch.where(hit[:, None], kick * mass[:, None].double(), 0.0).to(force.dtype)
    scene.backend.xfrc_applied[env_ids, body, :3] = force


# -- the hand --------------------------------------------------------------------------------
def randomize_torque_limit(env, env_ids: torch.Tensor,
                           strength_range: tuple[float, float]) -> None:
    """Motor strength (the current limit's torque, scaling the clipped PD torque) ~ U(range),
    one draw per env for all joints (one supply and one current-limit setting per hand)."""
    act = env.scene.actuator
    scale = sample_range(env, env_ids, strength_range, (len(env_ids), 1))
    act.strength[env_ids] = scale.expand(-1, act.num_joints).to(act.strength.dtype)


def randomize_joint_dynamics(env, env_ids: torch.Tensor,
                             frictionloss_scale: tuple[float, float],
                             armature_scale: tuple[float, float]) -> None:
    """Per-joint dry friction and reflected rotor inertia x U(range) (MuJoCo frictionloss,
    armature), drawn per joint."""
    dofs = _hand_dofs(env)
    _randomize_rows(env, env_ids, 'dof_frictionloss', dofs, frictionloss_scale, 'scale', True)
    _randomize_rows(env, env_ids, 'dof_armature', dofs, armature_scale, 'scale', True)
    env.scene.backend.set_const(env_ids)


def randomize_link_masses(env, env_ids: torch.Tensor, scale_range: tuple[float, float]) -> None:
    """Every moving hand link's mass x U(range), drawn per link."""
    scene = env.scene
    links = torch.as_tensor([b for b in scene.info.hand_body_ids
                             if scene.model.body_dofnum[b] > 0])
    _randomize_rows(env, env_ids, 'body_mass', links, scale_range, 'scale', True)
    env.scene.backend.set_const(env_ids)


def reset_grasp(env, env_ids: torch.Tensor, joint_noise_rad: float, cube_offset_m: float,
                cube_yaw_rad: float) -> None:
    """Joints at the grasp pose + U(-noise, noise), within their ranges; the cube on the palm
    (raised or lowered for its drawn size), shifted U(-offset, offset) in x and y and turned
    U(-yaw, yaw) about the palm normal (a quarter turn maps the cube onto itself, so small
    turns cover its poses)."""
    scene, n = env.scene, len(env_ids)
    q0 = scene.default_joint_pos_rad.double()
    q = q0 + sample_uniform(env, -joint_noise_rad, joint_noise_rad, (n, len(q0)))
    limits = scene.joint_pos_limits_rad.double()
    q = torch.minimum(torch.maximum(q, limits[:, 0]), limits[:, 1])
    backend = scene.backend
    backend.qpos[env_ids[:, None], torch.as_tensor(scene.info.qpos_adr)] = q.to(
        backend.qpos.dtype)
    p = scene.info.object_qpos_adr
    pos = scene.cube_spawn_pos_w.double().repeat(n, 1)
    pos[:, :2] += sample_uniform(env, -cube_offset_m, cube_offset_m, (n, 2))
    # resting on the palm whatever its drawn size (the spawn height is the nominal cube's)
    half_m = scene.info.object_size_m[2] / 2
    pos[:, 2] += (scene.cube_size_scale[env_ids].double() - 1.0) * half_m
    yaw = sample_uniform(env, -cube_yaw_rad, cube_yaw_rad, (n,))
    zero = torch.zeros(n, dtype=torch.float64)
    quat = torch.stack([(yaw / 2).cos(), zero, zero, (yaw / 2).sin()], dim=1)
    backend.qpos[env_ids, p:p + 3] = pos.to(backend.qpos.dtype)
    backend.qpos[env_ids, p + 3:p + 7] = quat.to(backend.qpos.dtype)
    scene.actuator.reset(env_ids, q)
