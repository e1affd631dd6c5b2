"""toyarm's training side: scene, target command, terms, metrics and the task 'toyarm-reach'.

Built only from sim2real's shared capabilities: the fixed-base joint model
(``sim2real.sim.joint_robot``), the batch backend, the joint PD actuator and the joint
position action term (``sim2real.mdp.joint_actions``). Rates: physics 200 Hz, policy 50 Hz.
"""

from __future__ import annotations

import math
from pathlib import Path

import torch

from sim2real import terms
from sim2real.algo_cfg import PolicyCfg, PPOCfg, TrainCfg
from sim2real.contract import file_sha256
from sim2real.mdp.cfg import (
    EnvCfg, EventTermCfg, ObsGroupCfg, ObsTermCfg, RandomParamCfg, RewardTermCfg, TermClassCfg,
    TerminationTermCfg)
from sim2real.mdp.joint_actions import JointPositionAction
from sim2real.mdp.ranges import sample_range
from sim2real.sim.backend import store_derived
from sim2real.sim.backends import make_backend
from sim2real.sim.bodies import float32_copy
from sim2real.sim.joint_actuator import JointActuator, JointActuatorCfg
from sim2real.sim.joint_robot import fixed_base_model
from sim2real.sim.state import Stateful
from sim2real.tasks.registry import register as register_task, TaskSpec
from sim2real.urdf import parse_urdf
from sim2real.verdict import Floor

from toyarm.kinematics import DEFAULT_POSE_RAD, link_lengths_m, tip_pos_b

URDF = Path(__file__).resolve().parent / 'toyarm.urdf'
"""The arm's URDF (written beside this file by the test that installs the plug-in)."""


class ArmScene(Stateful):
    """Fixed-base arm: backend, joint PD at physics rate, joint state and tip position."""

    STATE = ('joint_pos_rad', 'joint_vel_rad_s', 'tip_pos_b', 'finite')
    CHILDREN = ('backend', 'actuator')
    NOT_STATE = ('env', 'default_joint_pos_rad', 'joint_pos_limits_rad', '_qpos', '_qvel')

    def __init__(self, env, urdf: str = str(URDF), kp_nm_per_rad: float = 5.0,
                 kd_nm_s_per_rad: float = 0.5):
        """Model from the URDF, nominal PD gains per joint."""
        self.env = env
        n = env.num_envs
        self.urdf_path = Path(urdf)
        self.urdf_sha256 = file_sha256(self.urdf_path)
        model, self.info = fixed_base_model(self.urdf_path, env.cfg.physics_dt_s)
        self.model = model
        self.robot_name = parse_urdf(self.urdf_path).get('name')
        self.joint_names = self.info.joint_names
        self.links_m = link_lengths_m(self.urdf_path)
        self.mass_kg = float(model.body_subtreemass[1])
        self.backend = make_backend(model, n, env.cfg.backend, env.cfg.device,
                                    env.cfg.num_threads)
        self._qpos, self._qvel = list(self.info.qpos_adr), list(self.info.qvel_adr)
        self.default_joint_pos_rad = torch.tensor(DEFAULT_POSE_RAD)
        """Rest pose [rad], policy order, (2,)."""
        self.joint_pos_limits_rad = torch.as_tensor(self.info.pos_limits_rad).float()
        self.actuator = JointActuator(JointActuatorCfg(
            kp_nm_per_rad, kd_nm_s_per_rad, tuple(self.info.effort_limit_nm)), n, 2,
            xp=torch, dtype=torch.float64)
        self.finite = torch.ones(n, dtype=torch.bool)
        self.refresh()

    def reset(self, env_ids: torch.Tensor) -> None:
        """Simulations back to the model's defaults, motors holding the rest pose."""
        self.backend.reset(env_ids)
        self.backend.qpos[env_ids[:, None], self._qpos] = self.default_joint_pos_rad.double()
        self.actuator.reset(env_ids, self.default_joint_pos_rad.double())

    def simulate(self, num_substeps: int, before_substep) -> None:
        """Step the physics; before_substep(dt) writes the motor torques."""
        self.backend.simulate(num_substeps, before_substep)

    def apply_actuators(self, dt_s: float) -> None:
        """Physics-rate PD: joint torques into ctrl."""
        qpos, qvel = self.backend.qpos, self.backend.qvel
        torque = self.actuator.torque(qpos[:, self._qpos], qvel[:, self._qvel])
        self.backend.ctrl[:, list(self.info.actuator_ids)] = torque.to(self.backend.ctrl.dtype)

    def refresh(self, env_ids: torch.Tensor | None = None) -> None:
        """joint_pos_rad, joint_vel_rad_s, tip_pos_b [m; base frame xy] and finite."""
        rows = slice(None) if env_ids is None else env_ids
        finite = self.backend.recover_nonfinite(env_ids)
        q = float32_copy(self.backend.qpos[rows][:, self._qpos])
        store_derived(self, {
            'finite': finite, 'joint_pos_rad': q,
            'joint_vel_rad_s': float32_copy(self.backend.qvel[rows][:, self._qvel]),
            'tip_pos_b': tip_pos_b(q, *self.links_m)}, env_ids)

    def robot_description(self) -> dict:
        """Joint names, rest pose and nominal physical parameters for the contract."""
        info = self.info
        return {'joint_names': list(info.joint_names),
                'default_joint_pos_rad': list(DEFAULT_POSE_RAD),
                'robot_params': self.robot_params()}

    def robot_params(self) -> dict:
        """Nominal physical parameters, per joint in policy order."""
        info, act = self.info, self.actuator
        return {'mass_kg': self.mass_kg,
                'kp_nm_per_rad': act.kp_nm_per_rad[0].tolist(),
                'kd_nm_s_per_rad': act.kd_nm_s_per_rad[0].tolist(),
                'effort_limit_nm': info.effort_limit_nm.tolist(),
                'velocity_limit_rad_s': info.velocity_limit_rad_s.tolist(),
                'joint_pos_limits_rad': info.pos_limits_rad.tolist(),
                'link_lengths_m': list(self.links_m)}


class ReachTarget(Stateful):
    """A target point in the arm's plane, drawn at reset in an annulus around the shoulder."""

    STATE = ('pos_b',)
    NOT_STATE = ('env',)

    def __init__(self, env, radius_m: tuple[float, float] = (0.15, 0.5)):
        """radius_m: (inner, outer) radius of the annulus [m]."""
        self.env = env
        self.radius_m = radius_m
        self.pos_b = torch.zeros(env.num_envs, 2)
        """Target [m; base frame xy], (N, 2)."""

    def resample(self, env_ids: torch.Tensor) -> None:
        """Draw new targets for env_ids."""
        n, rng = len(env_ids), self.env.rng
        low, high = self.radius_m
        radius = low + (high - low) * torch.rand(n, generator=rng)
        angle = (2.0 * torch.rand(n, generator=rng) - 1.0) * math.pi
        self.pos_b[env_ids] = torch.stack([radius * torch.cos(angle),
                                           radius * torch.sin(angle)], 1)

    def update(self, dt_s: float) -> None:
        """The target does not move."""


# -- terms ----------------------------------------------------------------------------------
def joint_pos_rel(env) -> torch.Tensor:
    """Joint positions minus the rest pose [rad], (N, 2)."""
    return terms.joint_pos_rel(env.scene.joint_pos_rad, env.scene.default_joint_pos_rad)


def joint_vel(env) -> torch.Tensor:
    """Joint velocities [rad/s], (N, 2)."""
    return env.scene.joint_vel_rad_s


def target_pos_b(env) -> torch.Tensor:
    """The target [m; base frame xy], (N, 2)."""
    return env.command('target').pos_b


def action_history(env) -> torch.Tensor:
    """The latest clipped policy output, (N, 2)."""
    return env.action_term.last_action


def reach_error_m(env) -> torch.Tensor:
    """Distance from the tip to the target [m], (N,)."""
    return torch.linalg.vector_norm(env.scene.tip_pos_b - target_pos_b(env), dim=1)


def reach_exp(env, std_m: float) -> torch.Tensor:
    """exp(-(error / std)^2), (N,)."""
    return torch.exp(-(reach_error_m(env) / std_m) ** 2)


def action_rate_l2(env) -> torch.Tensor:
    """Squared change of the policy output, (N,)."""
    term = env.action_term
    return torch.sum((term.last_action - term.prev_action) ** 2, dim=1)


def time_out(env) -> torch.Tensor:
    """Episode length reached, (N,)."""
    return env.episode_length >= env.max_episode_length


def randomize_gains(env, env_ids: torch.Tensor, kp_scale: tuple[float, float]) -> None:
    """Kp of both joints x U(kp_scale) per env."""
    scale = sample_range(env, env_ids, kp_scale, (len(env_ids), 1))
    env.scene.actuator.kp_scale[env_ids] = scale.double().expand(-1, 2)


class ReachMetrics(Stateful):
    """Mean tip error over each episode's last second; success when <= tolerance_m."""

    STATE = ('_sum', '_count', 'last_success', 'last_error_m', 'finished')
    NOT_STATE = ('env',)

    quantiles = {'reach_error_m': 0.95}

    def __init__(self, env, tolerance_m: float = 0.05, window_s: float = 1.0):
        """Success threshold [m] and final window [s]."""
        self.env = env
        self.tolerance_m = tolerance_m
        self.window_steps = round(window_s / env.step_dt_s)
        n = env.num_envs
        self._sum, self._count = torch.zeros(n), torch.zeros(n)
        self.last_success = torch.zeros(n, dtype=torch.bool)
        self.last_error_m = torch.full((n,), math.nan)
        self.finished = torch.zeros(n, dtype=torch.long)

    @property
    def last_values(self) -> dict[str, torch.Tensor]:
        """Mean window error of each env's last finished episode [m]."""
        return {'reach_error_m': self.last_error_m}

    def update(self) -> None:
        """Accumulate the error inside the final window."""
        env = self.env
        inside = env.episode_length > env.max_episode_length - self.window_steps
        self._sum += torch.where(inside, reach_error_m(env), 0.0)
        self._count += inside.float()

    def finish(self, env_ids: torch.Tensor, terminated: torch.Tensor) -> dict[str, float]:
        """Judge the finished episodes of env_ids."""
        count = self._count[env_ids]
        full = (count >= self.window_steps) & ~terminated
        error = torch.where(full, self._sum[env_ids] / count.clamp(min=1), math.nan)
        self.last_error_m[env_ids] = error
        self.last_success[env_ids] = full & (error <= self.tolerance_m)
        self.finished[env_ids] += 1
        return {'episode/success': float(self.last_success[env_ids].float().mean())}

    def reset(self, env_ids: torch.Tensor) -> None:
        """Clear the accumulators of env_ids."""
        self._sum[env_ids] = 0.0
        self._count[env_ids] = 0.0


def reach_cfg(play: bool = False, action: str | None = None) -> EnvCfg:
    """Reach a random target in the plane within 4 s; Kp randomized x0.8-1.2."""
    if action not in (None, 'joint_position_offset'):
        raise ValueError(f'toyarm action "{action}" is not joint_position_offset')
    policy = {'joint_pos_rel': ObsTermCfg(joint_pos_rel),
              'joint_vel': ObsTermCfg(joint_vel, scale=0.1),
              'target_pos_b': ObsTermCfg(target_pos_b),
              'action_history': ObsTermCfg(action_history, delayed=False)}
    return EnvCfg(
        task='toyarm-reach', robot='toyarm',
        scene=TermClassCfg(ArmScene, {'kp_nm_per_rad': 5.0, 'kd_nm_s_per_rad': 0.5}),
        action=TermClassCfg(JointPositionAction, {'scale': 0.5, 'clip': 4.0,
                                                  'delay_ticks': (0, 1)}),
        commands={'target': TermClassCfg(ReachTarget, {})},
        # the critic sees what the actor sees (the runner trains on both groups)
        observations={'policy': ObsGroupCfg(policy), 'critic': ObsGroupCfg(dict(policy))},
        rewards={'reach': RewardTermCfg(reach_exp, 2.0, {'std_m': 0.1}),
                 'action_rate': RewardTermCfg(action_rate_l2, -0.01)},
        terminations={'time_out': TerminationTermCfg(time_out, time_out=True)},
        events={'gains': EventTermCfg(randomize_gains, 'reset', {'kp_scale': (0.8, 1.2)})},
        metrics=TermClassCfg(ReachMetrics, {}),
        randomization={
            'kp_scale': RandomParamCfg('events.gains.kp_scale', 1.0, 'x Kp (5 N m/rad)',
                                       source='toyarm.task'),
            'action_delay_ticks': RandomParamCfg('action.delay_ticks', 0.0, 'ticks (20 ms)',
                                                 integer=True, source='toyarm.task')},
        physics_dt_s=0.005, decimation=4, episode_length_s=4.0, num_envs=256)


def register() -> None:
    """The task 'toyarm-reach' with small PPO defaults."""
    train = TrainCfg(algo='ppo', num_envs=256, max_iterations=200, ppo=PPOCfg(
        policy=PolicyCfg(actor_hidden_dims=(64, 64), critic_hidden_dims=(64, 64)),
        num_steps_per_env=24, num_mini_batches=4))
    register_task(TaskSpec(
        'toyarm-reach', reach_cfg, 'toy fixed-base 2-joint arm (plug-in): reach a target',
        train, {'eval': (Floor('reach_error_m', '<=', 0.05),)},
        actions=('joint_position_offset',)))
