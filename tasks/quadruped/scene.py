"""The quadruped scene: MuJoCo batch backend, joint PD motors at physics rate, terrain, and the
robot state (base, joints in policy order, contacts) as torch tensors.

Contacts come from MuJoCo ``contact`` sensors (``data="found"``), one per body of interest
against the floor geom (plane or heightfield): the count of its active contacts. They are
evaluated at MuJoCo's position stage from the contact list the step computes anyway, so they
cost almost nothing, and they are exact on any terrain, unlike a foot-height test. All other
model sensors (IMU, pose) serve the HIL bridge and are removed here. ``cfrc_ext`` is not an
option: ``Batch.step`` does not run ``mj_rnePostConstraint``, so it stays zero. As every
output of ``Batch.step``, the sensors describe the state before the last physics substep,
i.e. 5 ms old at the end of a policy step.
"""

from __future__ import annotations

import mujoco
import torch

from sim2real import terms
from sim2real.assets import urdf_path
from sim2real.contract import file_sha256
from sim2real.device import generator
from sim2real.sim.backend import store_derived
from sim2real.sim.bodies import float32_copy
from sim2real.sim.backends import make_backend
from sim2real.sim.joint_actuator import JointActuator, JointActuatorCfg
from sim2real.sim.legged import legged_info, legged_spec, LEGS
from sim2real.sim.mjcf import BASE_BODY
from sim2real.sim.state import Stateful
from sim2real.sim.terrain import generate, TerrainCfg
from sim2real.sim.video_view import VideoView
from sim2real.tasks.quadruped.terrain import floor_pos_w, GroundModel, hfield_args

# bodies with a ground-contact sensor, in this order: feet, then the "undesired" ones
FOOT_BODIES = tuple(f'{leg}_foot' for leg in LEGS)
BODY_CONTACTS = ('base_link',) + tuple(f'{leg}_{part}' for leg in LEGS
                                       for part in ('thigh', 'calf'))
_FOUND = 1 << int(mujoco.mjtConDataField.mjCONDATA_FOUND)


def _add_contact_sensors(spec: mujoco.MjSpec) -> None:
    """Replace the model's sensors by one 'found' contact sensor per body vs the floor."""
    for sensor in list(spec.sensors):
        spec.delete(sensor)
    for body in FOOT_BODIES + BODY_CONTACTS:
        sensor = spec.add_sensor(name=f'contact_{body}', type=mujoco.mjtSensor.mjSENS_CONTACT,
                                 objtype=mujoco.mjtObj.mjOBJ_BODY, objname=body,
                                 reftype=mujoco.mjtObj.mjOBJ_GEOM, refname='floor')
        sensor.intprm[0], sensor.intprm[1], sensor.intprm[2] = _FOUND, 0, 1   # data, reduce, num


def _index(ids) -> slice | torch.Tensor:
    """A slice for consecutive ids (views, no gather copies), else an index tensor."""
    if len(ids) and (ids == range(ids[0], ids[0] + len(ids))).all():
        return slice(int(ids[0]), int(ids[0]) + len(ids))
    return torch.as_tensor(ids)


class QuadrupedScene(Stateful):
    """Backend + joint motors + ground; refresh() derives the state the terms read."""

    STATE = ('_found', 'encoder_bias_rad', 'imu_rotmat_bi', 'feet_air_time_s',
             'feet_last_air_time_s', 'feet_first_contact', 'joint_vel_prev_rad_s', 'finite',
             'pos_w', 'quat_w', 'rotmat_wb', 'lin_vel_w', 'lin_vel_b', 'ang_vel_b',
             'projected_gravity_b', 'joint_pos_rad', 'joint_vel_rad_s', '_field_defaults')
    CHILDREN = ('backend', 'actuator', 'ground')
    # foot_contact and body_contact are views of _found
    NOT_STATE = ('env', '_qpos_adr', '_qvel_adr', '_act_ids', 'default_joint_pos_rad',
                 'joint_pos_limits_rad', 'foot_contact', 'body_contact')

    def __init__(self, env, urdf: str = 'quadruped', terrain: TerrainCfg | None = None,
                 max_init_level: int = 5, kp_nm_per_rad: float = 25.0,
                 kd_nm_s_per_rad: float = 0.5, max_strength: float = 1.1):
        """Model from urdf/<urdf>.urdf on terrain (None: flat floor); nominal PD gains; the
        highest motor-strength scale the events may draw (MuJoCo's limits are raised to it)."""
        self.env = env
        n = env.num_envs
        self.urdf_path = urdf_path(urdf)
        self.urdf_sha256 = file_sha256(self.urdf_path)
        ground = None if terrain is None else generate(terrain, seed=env.cfg.seed)
        # the curriculum draws from its own generator: its draws depend on how episodes
        # went, and must not shift the env's stream (a reseeded reset repeats its draws)
        curriculum_rng = generator(env.device, env.cfg.seed)
        self.ground = GroundModel(ground, n, max_init_level, curriculum_rng)
        spec = legged_spec(self.urdf_path, env.cfg.physics_dt_s,
                           None if ground is None else hfield_args(ground))
        if ground is not None:
            spec.geom('floor').pos = floor_pos_w(ground)
        _add_contact_sensors(spec)
        model = spec.compile()
        self.info = info = legged_info(model, self.urdf_path)
        # strength multiplies after the actuator's own clip (joint_actuator.py): MuJoCo's
        # ctrl and joint force ranges must not cut a 1.1x motor back to the nominal effort
        model.actuator_ctrlrange[info.actuator_ids] *= max_strength
        joint_ids = [model.joint(name).id for name in info.joint_names]
        model.jnt_actfrcrange[joint_ids] *= max_strength
        self.model = model
        self.backend = make_backend(model, n, env.cfg.backend, env.cfg.device,
                                    env.cfg.num_threads)
        self._found = torch.zeros(n, len(FOOT_BODIES + BODY_CONTACTS), dtype=torch.bool)
        self.robot_name = model.names.split(b'\0', 1)[0].decode() or urdf
        self.video_view = VideoView(BASE_BODY, distance_m=1.2, elevation_deg=-20.0)
        """Rollout videos follow the base from 1.2 m."""
        self.joint_names = info.joint_names
        self.nominal_mass_kg = float(model.body_subtreemass[info.base_body_id])
        self._qpos_adr = _index(info.qpos_adr)
        self._qvel_adr = _index(info.qvel_adr)
        self._act_ids = _index(info.actuator_ids)
        self.default_joint_pos_rad = torch.as_tensor(info.default_joint_pos_rad).float()
        """Standing pose [rad], policy order, (12,)."""
        self.joint_pos_limits_rad = torch.as_tensor(info.pos_limits_rad).float()
        """Joint ranges (lower, upper) [rad], (12, 2)."""
        self.actuator = JointActuator(JointActuatorCfg(
            kp_nm_per_rad, kd_nm_s_per_rad, tuple(info.effort_limit_nm),
            tuple(info.stall_torque_nm), tuple(info.no_load_speed_rad_s)), n, 12, xp=torch,
            dtype=torch.float64)
        self.encoder_bias_rad = torch.zeros(n, 12)
        """Per-env joint encoder offsets added to the measured joint positions [rad]."""
        self.imu_rotmat_bi = torch.eye(3).repeat(n, 1, 1)
        """Per-env IMU mounting rotation, IMU frame to body frame, (N, 3, 3)."""
        self.feet_air_time_s = torch.zeros(n, 4)
        """Time since each foot last touched the ground [s], (N, 4)."""
        self.feet_last_air_time_s = torch.zeros(n, 4)
        """Air time of each foot's last swing, held from its touchdown [s], (N, 4)."""
        self.feet_first_contact = torch.zeros(n, 4, dtype=torch.bool)
        """Feet that touched down during the last policy step, (N, 4)."""
        self.joint_vel_prev_rad_s = torch.zeros(n, 12)
        """Joint velocities one policy step ago [rad/s], (N, 12)."""
        self.finite = torch.ones(n, dtype=torch.bool)
        self._field_defaults: dict[str, torch.Tensor] = {}
        """Unrandomized values of randomized model fields (events.py)."""
        self.refresh()

    # -- stepping ----------------------------------------------------------------------------
    def reset(self, env_ids: torch.Tensor) -> None:
        """Promote/demote finished envs on the terrain, then reset their simulations."""
        self._update_curriculum(env_ids)
        self.backend.reset(env_ids)
        self.backend.xfrc_applied[env_ids] = 0.0
        self.actuator.reset(env_ids, self.default_joint_pos_rad.double())
        self._found[env_ids] = False
        self.feet_air_time_s[env_ids] = 0.0
        self.feet_last_air_time_s[env_ids] = 0.0
        self.feet_first_contact[env_ids] = False
        self.joint_vel_prev_rad_s[env_ids] = 0.0

    def simulate(self, num_substeps: int, before_substep) -> None:
        """Step the physics; before_substep(dt) writes the motor torques; update air times."""
        self.joint_vel_prev_rad_s = self.joint_vel_rad_s
        self.backend.simulate(num_substeps, before_substep)
        self._found = self.backend.sensordata > 0
        self._update_air_time(num_substeps * self.backend.physics_dt_s)

    def apply_actuators(self, dt_s: float) -> None:
        """Physics-rate PD with the torque-speed envelope: write joint torques to ctrl."""
        qpos, qvel = self.backend.qpos, self.backend.qvel
        torque = self.actuator.torque(qpos[:, self._qpos_adr].double(),
                                      qvel[:, self._qvel_adr].double())
        self.backend.ctrl[:, self._act_ids] = torque.to(self.backend.ctrl.dtype)

    def _update_air_time(self, dt_s: float) -> None:
        """legged_gym's feet air time: count up in the air, report it at touchdown."""
        contact = self._found[:, :4]
        self.feet_air_time_s += dt_s
        self.feet_first_contact = (self.feet_air_time_s > dt_s) & contact
        self.feet_last_air_time_s = torch.where(
            self.feet_first_contact, self.feet_air_time_s, self.feet_last_air_time_s)
        self.feet_air_time_s = torch.where(contact, 0.0, self.feet_air_time_s)

    def _update_curriculum(self, env_ids: torch.Tensor) -> None:
        """Terrain levels from the distance walked in the episode that just ended."""
        if self.ground.curriculum is None:
            return
        env = self.env
        ran = env_ids[env.episode_length[env_ids] > 0]
        start = self.ground.origins(ran)[:, :2]
        distance = torch.linalg.vector_norm(self.pos_w[ran, :2] - start, dim=1)
        command = env.command('base_velocity').command[ran, :2]
        commanded = torch.linalg.vector_norm(command, dim=1) * env.cfg.episode_length_s
        self.ground.update_curriculum(ran, distance, commanded)

    # -- state -----------------------------------------------------------------------------
    def refresh(self, env_ids: torch.Tensor | None = None) -> None:
        """Recompute the derived state (float32) after stepping, or only the rows of env_ids
        after resetting them.

        pos_w [m; world], lin_vel_b [m/s; body], ang_vel_b [rad/s; body], projected_gravity_b
        (unit gravity direction in the body frame, (0, 0, -1) level), joint_pos_rad and
        joint_vel_rad_s (policy order); foot_contact (FL FR RL RR) and body_contact (base, then
        thigh and calf of each leg) are views of the contact sensors.
        """
        backend = self.backend
        state = backend.root_state(env_ids)
        qpos, qvel = (backend.qpos, backend.qvel) if env_ids is None else (
            backend.qpos[env_ids], backend.qvel[env_ids])
        state.update(projected_gravity_b=terms.projected_gravity(state['rotmat_wb']),
                     joint_pos_rad=float32_copy(qpos[:, self._qpos_adr]),
                     joint_vel_rad_s=float32_copy(qvel[:, self._qvel_adr]))
        store_derived(self, state, env_ids)
        if env_ids is None:   # views: rows written in place by reset() stay current
            self.foot_contact = self._found[:, :4]
            self.body_contact = self._found[:, 4:]

    def base_height_m(self) -> torch.Tensor:
        """Base height above the ground directly below it [m], (N,)."""
        return self.pos_w[:, 2] - self.ground.height(self.pos_w[:, 0], self.pos_w[:, 1])

    def robot_description(self) -> dict:
        """Joint names, standing pose and nominal physical parameters for the contract."""
        info = self.info
        return {'joint_names': list(info.joint_names),
                'default_joint_pos_rad': info.default_joint_pos_rad.tolist(),
                'robot_params': self.robot_params()}

    def robot_params(self) -> dict:
        """Nominal physical parameters, per joint in policy order."""
        info = self.info
        act = self.actuator
        return {
            'mass_kg': self.nominal_mass_kg,
            'kp_nm_per_rad': act.kp_nm_per_rad[0].tolist(),
            'kd_nm_s_per_rad': act.kd_nm_s_per_rad[0].tolist(),
            'effort_limit_nm': info.effort_limit_nm.tolist(),
            'velocity_limit_rad_s': info.velocity_limit_rad_s.tolist(),
            'stall_torque_nm': info.stall_torque_nm.tolist(),
            'no_load_speed_rad_s': info.no_load_speed_rad_s.tolist(),
            'joint_pos_limits_rad': info.pos_limits_rad.tolist(),
            'nominal_base_height_m': info.nominal_base_height_m,
            'foot_names': list(info.foot_names),
        }
