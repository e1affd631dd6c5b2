"""The quadrotor scene: MuJoCo batch backend, rotor actuator and the base state as torch."""

from __future__ import annotations

import dataclasses

import mujoco
import torch

from sim2real.assets import urdf_path
from sim2real.contract import file_sha256
from sim2real.sim.backend import store_derived
from sim2real.sim.backends import make_backend
from sim2real.sim.mjcf import BASE_BODY, quadrotor_model
from sim2real.sim.quadrotor import QuadrotorActuator
from sim2real.sim.state import Stateful
from sim2real.sim.video_view import VideoView

GRAVITY_M_S2 = 9.81


class QuadrotorScene(Stateful):
    """Backend + actuator; refresh() derives the frames the terms read."""

    STATE = ('finite', 'pos_w', 'quat_w', 'rotmat_wb', 'lin_vel_w', 'lin_vel_b', 'ang_vel_b',
             '_field_defaults')
    CHILDREN = ('backend', 'actuator')
    NOT_STATE = ('nominal_inertia_kg_m2', 'nominal_inertia_t')

    def __init__(self, env, urdf: str = 'quadrotor'):
        """Build the model from urdf/<urdf>.urdf at the env's physics rate."""
        self.urdf_path = urdf_path(urdf)
        self.urdf_sha256 = file_sha256(self.urdf_path)
        model, self.rotors = quadrotor_model(self.urdf_path, env.cfg.physics_dt_s)
        # training observes qpos/qvel directly; the MJCF's IMU and pose sensors serve the
        # HIL bridge, so they are switched off here (about 2x faster stepping)
        model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_SENSOR
        self.model = model
        self.backend = make_backend(model, env.num_envs, env.cfg.backend, env.cfg.device,
                                    env.cfg.num_threads)
        body = model.body(BASE_BODY)
        self.robot_name = model.names.split(b'\0', 1)[0].decode() or urdf
        self.video_view = VideoView(BASE_BODY, distance_m=0.6, elevation_deg=-20.0)
        """Rollout videos follow the body from 60 cm; the target sphere shows where it goes."""
        self.nominal_mass_kg = float(body.mass[0])
        self.nominal_inertia_kg_m2 = body.inertia.copy()
        self.nominal_inertia_t = torch.as_tensor(self.nominal_inertia_kg_m2)
        """The same on the env's device (float64), for the privileged observation."""
        self.actuator = QuadrotorActuator(
            self.rotors, self.nominal_inertia_kg_m2, env.num_envs, xp=torch,
            dtype=torch.float64)
        self.hover_thrust_n = self.nominal_mass_kg * GRAVITY_M_S2
        self.hover_speed_rad_s = self.actuator.hover_speed_rad_s(self.nominal_mass_kg)
        self.finite = torch.ones(env.num_envs, dtype=torch.bool)
        self._field_defaults: dict[str, torch.Tensor] = {}
        """Unrandomized values of randomized model fields (sim2real/mdp/events.py)."""
        self.refresh()

    def robot_description(self) -> dict:
        """No joints; nominal mass, inertia, hover thrust and rotor model, for the contract."""
        return {'joint_names': [], 'default_joint_pos_rad': [], 'robot_params': {
            'mass_kg': self.nominal_mass_kg,
            'inertia_kg_m2': [float(v) for v in self.nominal_inertia_kg_m2],
            'hover_thrust_n': self.hover_thrust_n,
            'rotors': dataclasses.asdict(self.rotors),
        }}

    def reset(self, env_ids: torch.Tensor) -> None:
        """Reset simulations to defaults, motors at hover speed, no external force."""
        self.backend.reset(env_ids)
        self.actuator.reset(env_ids, self.hover_speed_rad_s)
        self.backend.xfrc_applied[env_ids] = 0.0

    def simulate(self, num_substeps: int, before_substep) -> None:
        """Step the physics; before_substep(dt) writes the actuator commands."""
        self.backend.simulate(num_substeps, before_substep)

    def apply_rotors(self, dt_s: float) -> None:
        """Advance the motor model one physics step and write the rotor thrusts."""
        ctrl = self.backend.ctrl
        ctrl[:] = self.actuator.substep(self.backend.root_ang_vel_b.double(), dt_s)

    def refresh(self, env_ids: torch.Tensor | None = None) -> None:
        """Recompute the derived base state (float32) after stepping, or only the rows of
        env_ids after resetting them."""
        store_derived(self, self.backend.root_state(env_ids), env_ids)
