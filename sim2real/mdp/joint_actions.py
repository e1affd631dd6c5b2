"""Joint action term of any jointed robot: position offsets from the default pose, delayed,
PD-tracked.

q* = q0 + scale * clip(a, -clip, clip) [rad], policy joint order. The target reaches the
motors 0..max control ticks late (per env, drawn at reset, a DelayBuffer) and is tracked by
the physics-rate PD of ``sim2real.sim.joint_actuator``. The deploy runtime's integrator of
the same kind (``joint_position_offset``) computes the same targets.

What it asks of the scene: ``joint_names``, ``default_joint_pos_rad`` (a tensor, policy
order), ``actuator`` (a JointActuator whose ``target_rad`` it sets), ``apply_actuators(dt)``,
``robot_description()`` and ``robot_params()`` (kp, kd and effort limits per joint).
"""

from __future__ import annotations

import torch

from sim2real import terms
from sim2real.contract import ActionSpec
from sim2real.mdp.ranges import bounds, sample_int_range
from sim2real.sim.delay import DelayBuffer
from sim2real.sim.state import Stateful


PD_ENVELOPE = ('tau = kp (q* - q) - kd qd at physics rate, within the torque-speed envelope '
               'of robot_params (stall_torque_nm, no_load_speed_rad_s)')
"""The PD law of a robot whose motors have a torque-speed line."""
PD_CLIPPED = 'tau = kp (q* - q) - kd qd at physics rate, clipped to +-effort_limit_nm'
"""The PD law of a robot with a torque limit only."""


class JointPositionAction(Stateful):
    """Absolute joint targets around the default pose, with a per-env action delay."""

    STATE = ('last_action', 'prev_action')
    CHILDREN = ('_buffer',)
    NOT_STATE = ('env', 'scene', '_default')

    kind = 'joint_position_offset'

    def __init__(self, env, scale: float = 0.25, clip: float = 4.0,
                 delay_ticks: tuple[int, int] = (0, 0)):
        """scale [rad per unit output]; clip of the outputs; per-env delay range [ticks]."""
        self.env = env
        self.scene = env.scene
        self.scale = scale
        self.clip = clip
        self.delay_ticks = delay_ticks
        n = env.num_envs
        self.size = len(self.scene.joint_names)
        self.last_action = torch.zeros(n, self.size)
        """Latest clipped policy output, (N, joints)."""
        self.prev_action = torch.zeros(n, self.size)
        """Clipped policy output one tick earlier, (N, joints)."""
        self._buffer = DelayBuffer(n, (self.size,), int(round(bounds(delay_ticks)[1])), xp=torch,
                                   dtype=torch.float32)
        self._default = self.scene.default_joint_pos_rad

    @property
    def history(self) -> torch.Tensor:
        """The latest clipped output as a one-step history, (N, 1, joints) (deploy's layout)."""
        return self.last_action[:, None, :]

    @property
    def delay(self) -> torch.Tensor:
        """Per-env action delay [control ticks], (N,)."""
        return self._buffer.delay_ticks

    def reset(self, env_ids: torch.Tensor) -> None:
        """Zero the outputs and the delay line, draw new delays, hold the standing pose."""
        self.last_action[env_ids] = 0.0
        self.prev_action[env_ids] = 0.0
        self._buffer.reset(env_ids, 0.0)
        self._buffer.set_delay(env_ids, sample_int_range(self.env, env_ids, self.delay_ticks))
        self.scene.actuator.target_rad[env_ids] = self._default.double()

    def process(self, actions: torch.Tensor) -> None:
        """Clip and record the outputs; the delayed ones set the joint targets."""
        clipped = actions.clamp(-self.clip, self.clip)
        self.prev_action = self.last_action
        self.last_action = clipped
        self._buffer.push(clipped)
        target = terms.joint_offset_target(self._default, self.scale, self._buffer.delayed())
        self.scene.actuator.target_rad = target.double()

    def apply(self, dt_s: float) -> None:
        """Physics-rate callback: PD torques into MuJoCo."""
        self.scene.apply_actuators(dt_s)

    def spec(self) -> ActionSpec:
        """Contract entry of this action interface."""
        params = self.scene.robot_params()
        return ActionSpec(kind=self.kind, size=self.size, clip=self.clip, params={
            'scale': self.scale,
            'default_joint_pos_rad': self.scene.robot_description()['default_joint_pos_rad'],
            'kp_nm_per_rad': params['kp_nm_per_rad'],
            'kd_nm_s_per_rad': params['kd_nm_s_per_rad'],
            'effort_limit_nm': params['effort_limit_nm'],
            'target_formula': 'default_joint_pos_rad + scale * clip(a, -clip, clip), '
                              'joint order of joint_names',
            'pd_formula': PD_ENVELOPE if 'stall_torque_nm' in params else PD_CLIPPED,
            'delay_ticks_trained': [int(round(b)) for b in bounds(self.delay_ticks)]})
