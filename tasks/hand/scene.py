"""The hand scene: the LEAP-class hand holding a cube (``sim2real.sim.in_hand``), joint PD
motors at physics rate, and the state the terms read as torch tensors.

The cube's rotation about the task axis (the z axis of the link its spawn position is given
in: the palm centre, palm normal up) is measured as the hand's metric defines it: per control
step, the signed angle of q_t q_{t-1}^-1 about the axis (``terms.axis_rotation_rad``).
"""

from __future__ import annotations

import mujoco
import torch

from sim2real import terms
from sim2real.assets import urdf_path
from sim2real.contract import file_sha256
from sim2real.sim.backend import store_derived
from sim2real.sim.backends import make_backend
from sim2real.sim.bodies import float32_copy
from sim2real.sim.frame_kinematics import FrameKinematics
from sim2real.sim.in_hand import in_hand_model
from sim2real.sim.joint_actuator import JointActuator, JointActuatorCfg
from sim2real.sim.state import Stateful
from sim2real.sim.video_view import VideoView
from sim2real.urdf import parse_urdf


class HandScene(Stateful):
    """Backend + joint motors + the cube; refresh() derives the state the terms read."""

    STATE = ('finite', 'joint_pos_rad', 'joint_vel_rad_s', 'encoder_bias_rad', 'cube_pos_w',
             'cube_quat_w', 'cube_lin_vel_w', 'cube_ang_vel_b', 'cube_rotation_step_rad',
             'cube_size_scale', 'fingertip_pos_m', '_cube_quat_prev', '_field_defaults',
             'joint_sensor_age_substeps')
    CHILDREN = ('backend', 'actuator')
    NOT_STATE = ('env', 'default_joint_pos_rad', 'joint_pos_limits_rad', 'axis_w',
                 'cube_spawn_pos_w', 'fingertip_kinematics', '_qpos_adr', '_qvel_adr',
                 '_act_ids', '_recent_joint_pos_rad')

    def __init__(self, env, urdf: str = 'hand', kp_nm_per_rad: float = 3.0,
                 kd_nm_s_per_rad: float = 0.1, grasp_pose_rad: dict | None = None):
        """Model from urdf/<urdf>.urdf with its cube; nominal PD gains per joint;
        grasp_pose_rad: joint name -> angle [rad] replacing the URDF's default pose there (the
        reset pose, the pose penalty's reference and the contract's default pose)."""
        self.env = env
        n = env.num_envs
        self.urdf_path = urdf_path(urdf)
        self.urdf_sha256 = file_sha256(self.urdf_path)
        self.model, self.info = model, info = in_hand_model(self.urdf_path,
                                                            env.cfg.physics_dt_s)
        self.backend = make_backend(model, n, env.cfg.backend, env.cfg.device,
                                    env.cfg.num_threads)
        self.robot_name = parse_urdf(self.urdf_path).get('name')
        self.video_view = VideoView(info.object_name, distance_m=0.3, azimuth_deg=0.0,
                                    elevation_deg=-75.0)
        """Rollout videos film the cube from 30 cm above the palm, fingers up the frame."""
        self.joint_names = info.joint_names
        self.nominal_mass_kg = float(sum(model.body_mass[info.hand_body_ids]))
        self._qpos_adr = torch.as_tensor(info.qpos_adr)
        self._qvel_adr = torch.as_tensor(info.qvel_adr)
        self._act_ids = torch.as_tensor(info.actuator_ids)
        data = mujoco.MjData(model)
        mujoco.mj_kinematics(model, data)
        self.axis_w = torch.as_tensor(data.xmat[info.frame_body_id].reshape(3, 3)[:, 2]).float()
        """The task axis: the palm normal [world], (3,)."""
        self.cube_spawn_pos_w = torch.as_tensor(info.object_spawn_pos_m).float()
        """Where the cube rests on the palm at reset [m; world], (3,)."""
        pose = [float(q) for q in info.default_joint_pos_rad]
        unknown = sorted(set(grasp_pose_rad or {}) - set(info.joint_names))
        if unknown:
            raise ValueError(f'grasp_pose_rad: no joints {unknown} (joints: '
                             f'{", ".join(info.joint_names)})')
        for name, angle_rad in (grasp_pose_rad or {}).items():
            pose[info.joint_names.index(name)] = float(angle_rad)
        self.grasp_pose_rad = pose
        """The grasp pose [rad], policy order, 16 floats (the URDF's unless overridden)."""
        self.default_joint_pos_rad = torch.tensor(pose).float()
        """The grasp pose [rad], policy order, (16,)."""
        self.joint_pos_limits_rad = torch.as_tensor(info.pos_limits_rad).float()
        """Joint ranges (lower, upper) [rad], (16, 2)."""
        j = len(info.joint_names)
        self.actuator = JointActuator(JointActuatorCfg(
            kp_nm_per_rad, kd_nm_s_per_rad, tuple(info.effort_limit_nm),
            tuple(info.stall_torque_nm), tuple(info.no_load_speed_rad_s)), n, j, xp=torch,
            dtype=torch.float64)
        self.encoder_bias_rad = torch.zeros(n, j)
        """Per-env joint encoder offsets added to the measured joint positions [rad]."""
        self.joint_sensor_age_substeps = torch.zeros(n, dtype=torch.long)
        """Per-env age of the joint readings at a control tick [physics steps]: the servo
        bus samples the joints before the tick (events.randomize_joint_sensor_age)."""
        self._recent_joint_pos_rad: torch.Tensor | None = None
        """The joint angles before the last tick's final physics steps, oldest first."""
        self.cube_size_scale = torch.ones(n)
        """Per-env cube edge / nominal edge (events.randomize_cube_size), (N,)."""
        self._cube_quat_prev = torch.zeros(n, 4)
        self.cube_rotation_step_rad = torch.zeros(n)
        """Signed rotation of the cube about axis_w over the last control step [rad], (N,)."""
        self.finite = torch.ones(n, dtype=torch.bool)
        self._field_defaults: dict[str, torch.Tensor] = {}
        """Unrandomized values of randomized model fields (sim2real.mdp.events)."""
        self.fingertip_kinematics = FrameKinematics(self.urdf_path, info.joint_names,
                                                    info.fingertip_names)
        """The fingertips' forward kinematics on the URDF (the deploy guard's points)."""
        self.refresh()
        self._cube_quat_prev = self.cube_quat_w.clone()

    # -- stepping ----------------------------------------------------------------------------
    def reset(self, env_ids: torch.Tensor) -> None:
        """Simulations back to the model's defaults: the grasp pose, the cube on the palm."""
        self.backend.reset(env_ids)
        self.backend.xfrc_applied[env_ids] = 0.0
        q0 = self.default_joint_pos_rad.double()
        self.backend.qpos[env_ids[:, None], self._qpos_adr] = q0.to(self.backend.qpos.dtype)
        self.actuator.reset(env_ids, q0)
        self.cube_rotation_step_rad[env_ids] = 0.0

    def measured_joint_pos_rad(self, env_ids: torch.Tensor) -> torch.Tensor:
        """The joint readings of env_ids now (encoder offsets included) [rad], (n, 16): what
        a delta integrator is seeded with (the derived state is not refreshed yet at reset)."""
        q = self.backend.qpos[env_ids[:, None], self._qpos_adr].double()
        return q + self.encoder_bias_rad[env_ids].double()

    def simulate(self, num_substeps: int, before_substep) -> None:
        """Step the physics; before_substep(dt) writes the motor torques. With joint readings
        older than the tick's end, the angles of the last physics steps are kept for refresh."""
        self._cube_quat_prev = self.cube_quat_w
        oldest = min(int(self.joint_sensor_age_substeps.max()), num_substeps)
        if oldest == 0:
            self._recent_joint_pos_rad = None
            self.backend.simulate(num_substeps, before_substep)
            return
        angles = []

        def sample_then_step(dt_s: float) -> None:
            """Keep the joint angles before this physics step, then write the torques."""
            angles.append(float32_copy(self.backend.qpos[:, self._qpos_adr]))
            before_substep(dt_s)

        self.backend.simulate(num_substeps, sample_then_step)
        self._recent_joint_pos_rad = torch.stack(angles[num_substeps - oldest:])

    def apply_actuators(self, dt_s: float) -> None:
        """Physics-rate PD with the torque-speed envelope: write joint torques to ctrl. The
        servo closes its loop on its own encoder, offset included: it holds the reading, not
        the true angle, at the target (as the policy's observed q and q* agree on the hand)."""
        qpos, qvel = self.backend.qpos, self.backend.qvel
        torque = self.actuator.torque(
            qpos[:, self._qpos_adr].double() + self.encoder_bias_rad.double(),
            qvel[:, self._qvel_adr].double())
        self.backend.ctrl[:, self._act_ids] = torque.to(self.backend.ctrl.dtype)

    # -- state -----------------------------------------------------------------------------
    def refresh(self, env_ids: torch.Tensor | None = None) -> None:
        """Recompute the derived state (float32) after stepping, or the rows of env_ids after
        resetting them (their rotation step restarts at zero).

        joint_pos_rad (measured: encoder offsets included) and joint_vel_rad_s, policy order;
        cube_pos_w [m], cube_quat_w (w, x, y, z), cube_lin_vel_w [m/s], cube_ang_vel_b [rad/s;
        cube frame]; cube_rotation_step_rad about axis_w since the previous refresh;
        fingertip_pos_m (N, k, 3) [m; the URDF root link's frame]: the fingertips of the
        measured joints (encoder offsets included), as the deploy's fingertip guard computes
        them with Pinocchio on the hand's readings.
        """
        backend = self.backend
        rows = slice(None) if env_ids is None else env_ids
        finite = backend.recover_nonfinite(env_ids)
        qpos, qvel = backend.qpos[rows], backend.qvel[rows]
        p, v = self.info.object_qpos_adr, self.info.object_qvel_adr
        quat = float32_copy(qpos[:, p + 3:p + 7])
        measured = self._sensed_joint_pos_rad(float32_copy(qpos[:, self._qpos_adr]), env_ids,
                                              finite)
        measured = measured + self.encoder_bias_rad[rows]
        prev = quat if env_ids is not None else self._cube_quat_prev
        store_derived(self, {
            'finite': finite,
            'joint_pos_rad': measured,
            'joint_vel_rad_s': float32_copy(qvel[:, self._qvel_adr]),
            'cube_pos_w': float32_copy(qpos[:, p:p + 3]), 'cube_quat_w': quat,
            'cube_lin_vel_w': float32_copy(qvel[:, v:v + 3]),
            'cube_ang_vel_b': float32_copy(qvel[:, v + 3:v + 6]),
            'cube_rotation_step_rad': terms.axis_rotation_rad(quat, prev, self.axis_w),
            'fingertip_pos_m': self.fingertip_kinematics.positions(measured)},
            env_ids)
        if env_ids is not None:
            self._cube_quat_prev[env_ids] = quat

    def _sensed_joint_pos_rad(self, now_rad: torch.Tensor, env_ids,
                              finite: torch.Tensor) -> torch.Tensor:
        """The joint angles each env's servo bus read: now_rad, or those its reading age
        before the tick's end (after a reset, at age 0, and where the simulation diverged
        and was recovered this tick, the angles now) [rad]."""
        recent = self._recent_joint_pos_rad
        if env_ids is not None or recent is None:
            return now_rad
        oldest = recent.shape[0]
        age = self.joint_sensor_age_substeps.clamp(max=oldest).to(now_rad.device)
        stacked = torch.cat([recent, now_rad[None]])   # index oldest: age 0
        aged = stacked[oldest - age, torch.arange(len(age), device=now_rad.device)]
        usable = finite.to(now_rad.device)[:, None] & torch.isfinite(aged).all(1, keepdim=True)
        return torch.where(usable, aged, now_rad)

    def cube_pos_rel_m(self) -> torch.Tensor:
        """Cube position relative to where it rests at reset [m; world], (N, 3)."""
        return self.cube_pos_w - self.cube_spawn_pos_w

    def robot_description(self) -> dict:
        """Joint names, grasp pose and nominal physical parameters for the contract."""
        return {'joint_names': list(self.info.joint_names),
                'default_joint_pos_rad': list(self.grasp_pose_rad),
                'robot_params': self.robot_params()}

    def robot_params(self) -> dict:
        """Nominal physical parameters, per joint in policy order."""
        info, act = self.info, self.actuator
        return {
            'mass_kg': self.nominal_mass_kg,
            'kp_nm_per_rad': act.kp_nm_per_rad[0].tolist(),
            'kd_nm_s_per_rad': act.kd_nm_s_per_rad[0].tolist(),
            'effort_limit_nm': info.effort_limit_nm.tolist(),
            'velocity_limit_rad_s': info.velocity_limit_rad_s.tolist(),
            'stall_torque_nm': info.stall_torque_nm.tolist(),
            'no_load_speed_rad_s': info.no_load_speed_rad_s.tolist(),
            'joint_pos_limits_rad': info.pos_limits_rad.tolist(),
            'fingertip_names': list(info.fingertip_names),
            'object_size_m': list(info.object_size_m),
            'object_mass_kg': info.object_mass_kg,
        }
