"""Joint action term of any jointed robot: position offsets from the default pose, delayed,
PD-tracked.

q* = q0 + scale * clip(a, -clip, clip) [rad], policy joint order. The target reaches the
motors 0..max control ticks late (per env, drawn at reset, a DelayBuffer), then a further
0..max physics steps late within the tick (``lag_substeps``: computing the policy, the bus and
the driver's write; a real node's command never lands on a control tick's boundary), and is
tracked by the physics-rate PD of ``sim2real.sim.joint_actuator``. The deploy runtime's
integrator of the same kind (``joint_position_offset``) computes the same targets.

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

    STATE = ('last_action', 'prev_action', 'lag_substeps_drawn')
    CHILDREN = ('_buffer',)
    NOT_STATE = ('env', 'scene', '_default', '_motor_prev_rad', '_motor_next_rad')

    kind = 'joint_position_offset'

    def __init__(self, env, scale: float = 0.25, clip: float = 4.0,
                 delay_ticks: tuple[int, int] = (0, 0), lag_substeps: tuple[int, int] = (0, 0)):
        """scale [rad per unit output]; clip of the outputs; per-env delay range [ticks];
        per-env lag range within a tick [physics steps, below the decimation]."""
        self.env = env
        self.scene = env.scene
        self.scale = scale
        self.clip = clip
        self.delay_ticks = delay_ticks
        self.lag_substeps = lag_substeps
        n = env.num_envs
        self.max_lag_substeps = int(round(bounds(lag_substeps)[1]))
        """Largest lag within a tick this term draws [physics steps]."""
        if self.max_lag_substeps >= env.cfg.decimation:
            raise ValueError(f'lag_substeps {bounds(lag_substeps)} must stay below the '
                             f'decimation ({env.cfg.decimation} physics steps per tick); '
                             'whole ticks of delay are delay_ticks')
        self.lag_substeps_drawn = torch.zeros(n, dtype=torch.long)
        """Per-env physics steps the motors keep the previous target after a tick, (N,)."""
        self._motor_prev_rad = None
        self._motor_next_rad = None
        self._substep = 0
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
        self._draw_lag(env_ids)
        self.scene.actuator.target_rad[env_ids] = self._default.double()

    def _draw_lag(self, env_ids: torch.Tensor) -> None:
        """Draw the per-env lag within a tick [physics steps] (none drawn when it is 0)."""
        if self.max_lag_substeps > 0:
            self.lag_substeps_drawn[env_ids] = sample_int_range(self.env, env_ids,
                                                                self.lag_substeps)

    def _command_motors(self, target_rad: torch.Tensor) -> None:
        """This tick's motor targets [rad]: they replace the previous ones after each env's
        lag within the tick (at once without a lag)."""
        if self.max_lag_substeps == 0:
            self.scene.actuator.target_rad = target_rad
            return
        self._motor_prev_rad = self.scene.actuator.target_rad.clone()
        self._motor_next_rad = target_rad
        self._substep = 0

    def process(self, actions: torch.Tensor) -> None:
        """Clip and record the outputs; the delayed ones set the joint targets."""
        clipped = actions.clamp(-self.clip, self.clip)
        self.prev_action = self.last_action
        self.last_action = clipped
        self._buffer.push(clipped)
        target = terms.joint_offset_target(self._default, self.scale, self._buffer.delayed())
        self._command_motors(target.double())

    def apply(self, dt_s: float) -> None:
        """Physics-rate callback: the targets in effect at this physics step (the previous
        tick's until the env's lag has passed), then PD torques into MuJoCo."""
        if self._motor_next_rad is not None:
            held = (self._substep < self.lag_substeps_drawn)[:, None]
            self.scene.actuator.target_rad = torch.where(held, self._motor_prev_rad,
                                                         self._motor_next_rad)
            self._substep += 1
            if self._substep > self.max_lag_substeps:
                self._motor_prev_rad = self._motor_next_rad = None
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
            'delay_ticks_trained': [int(round(b)) for b in bounds(self.delay_ticks)],
            **self._lag_spec()})

    def _lag_spec(self) -> dict:
        """The trained lag within a tick [s] for the contract, where training drew one."""
        if self.max_lag_substeps == 0:
            return {}
        return {'lag_s_trained': [round(int(round(b)) * self.env.cfg.physics_dt_s, 6)
                                  for b in bounds(self.lag_substeps)]}


TARGET_SEED = 'measured_joint_pos_rad'
"""How a delta integrator's state starts, at reset in training and at enable on the robot: the
measured joint positions (encoder offsets included), clipped to the joint ranges."""


class JointPositionDeltaAction(JointPositionAction):
    """Delta on the previous target: q* = clip(q*_prev + scale clip(a), lower, upper).

    The integrator state (``target_rad``, what the policy observes as its previous target) is
    seeded from the measured joints at reset, as the deploy runtime seeds it at enable, and
    moves every tick; the motors receive it 0..max ticks late (the per-env action delay).
    What it asks of the scene beyond JointPositionAction's: ``joint_pos_limits_rad`` (J, 2)
    and ``measured_joint_pos_rad(env_ids)``, the joint readings of those envs now.
    """

    STATE = JointPositionAction.STATE + ('target_rad',)
    NOT_STATE = JointPositionAction.NOT_STATE + ('_lower', '_upper')

    kind = 'joint_position_delta'

    def __init__(self, env, scale: float = 1.0 / 24.0, clip: float = 1.0,
                 delay_ticks: tuple[int, int] = (0, 0), noise_std: float = 0.0,
                 lag_substeps: tuple[int, int] = (0, 0)):
        """scale [rad per unit output per tick]; clip of the outputs; delay range [ticks];
        noise_std: Gaussian noise added to the clipped outputs before they are integrated
        (actuation noise; the policy's own outputs are what it records); lag range within a
        tick [physics steps]."""
        super().__init__(env, scale, clip, delay_ticks, lag_substeps)
        self.noise_std = noise_std
        self._buffer = DelayBuffer(env.num_envs, (self.size,),
                                   int(round(bounds(delay_ticks)[1])), xp=torch,
                                   dtype=torch.float64)
        limits = self.scene.joint_pos_limits_rad.double()
        self._lower, self._upper = limits[:, 0], limits[:, 1]
        self.target_rad = self._default.double().repeat(env.num_envs, 1)
        """Integrator state q* [rad], (N, joints): the latest target, not yet delayed."""

    def reset(self, env_ids: torch.Tensor) -> None:
        """Zero the outputs, draw new delays, seed q* with the measured joints (clipped)."""
        self.last_action[env_ids] = 0.0
        self.prev_action[env_ids] = 0.0
        self._buffer.set_delay(env_ids, sample_int_range(self.env, env_ids, self.delay_ticks))
        self._draw_lag(env_ids)
        seed = self.scene.measured_joint_pos_rad(env_ids).double()
        seed = torch.minimum(torch.maximum(seed, self._lower), self._upper)
        self.target_rad[env_ids] = seed
        self._buffer.reset(env_ids, seed)
        self.scene.actuator.target_rad[env_ids] = seed

    def process(self, actions: torch.Tensor) -> None:
        """Clip and record the outputs, integrate q*, send it through the delay line."""
        clipped = actions.clamp(-self.clip, self.clip)
        self.prev_action = self.last_action
        self.last_action = clipped
        applied = clipped.double()
        if self.noise_std > 0.0:
            applied = applied + self.noise_std * torch.randn(
                applied.shape, generator=self.env.rng, dtype=torch.float64)
        self.target_rad = terms.joint_delta_target(
            self.target_rad, self.scale, applied, self._lower, self._upper)
        self._buffer.push(self.target_rad)
        self._command_motors(self._buffer.delayed())

    def spec(self) -> ActionSpec:
        """Contract entry: the offset term's, with the integrator's limits and seeding."""
        return _with_target_range(
            super().spec(), self._lower, self._upper,
            'clip(q*_prev + scale * clip(a, -clip, clip), target_min_rad, target_max_rad), '
            'q*_prev seeded with the measured joint positions (clipped) at reset and at '
            'enable; joint order of joint_names')


class JointPositionTargetAction(JointPositionAction):
    """Absolute targets around the default pose (kind joint_position_offset), clipped to the
    joint ranges, that keep the commanded target as state the policy can observe
    (``target_rad``, as the delta integrator's), with actuation noise on the outputs.

    MuJoCo Playground's LeapCubeRotateZAxis interface: q* = q_home + 0.6 a (hand.md 1a),
    optionally rate-limited as the deploy node's slew cap limits it.
    """

    STATE = JointPositionDeltaAction.STATE
    NOT_STATE = JointPositionDeltaAction.NOT_STATE

    def __init__(self, env, scale: float = 0.25, clip: float = 1.0,
                 delay_ticks: tuple[int, int] = (0, 0), noise_std: float = 0.0,
                 lag_substeps: tuple[int, int] = (0, 0)):
        """scale [rad per unit output]; clip of the outputs; delay range [ticks]; noise_std:
        Gaussian noise on the clipped outputs (the policy's own outputs are recorded); lag
        range within a tick [physics steps]."""
        super().__init__(env, scale, clip, delay_ticks, lag_substeps)
        self.noise_std = noise_std
        limits = self.scene.joint_pos_limits_rad.float()
        self._lower, self._upper = limits[:, 0], limits[:, 1]
        self.target_rad = self._default.float().repeat(env.num_envs, 1)
        """Latest commanded target q* [rad], (N, joints), before the delay."""

    def reset(self, env_ids: torch.Tensor) -> None:
        """The offset term's reset (the motors hold the default pose, and a delayed env's
        delay line holds it too: its first ticks keep that pose); the observed target starts
        at the measured joints, clipped to the ranges, as the deploy runtime's offset
        integrator seeds its target at enable."""
        super().reset(env_ids)
        self._buffer.reset(env_ids, self._default.float())   # targets [rad], not outputs
        seed = self.scene.measured_joint_pos_rad(env_ids).float()
        self.target_rad[env_ids] = torch.minimum(torch.maximum(seed, self._lower), self._upper)

    def process(self, actions: torch.Tensor) -> None:
        """Clip and record the outputs; the noisy target, clipped to the joint ranges, goes
        through the delay line."""
        clipped = actions.clamp(-self.clip, self.clip)
        self.prev_action = self.last_action
        self.last_action = clipped
        applied = clipped
        if self.noise_std > 0.0:
            applied = applied + self.noise_std * torch.randn(
                applied.shape, generator=self.env.rng, dtype=applied.dtype)
        target = terms.joint_offset_target(self._default.float(), self.scale, applied)
        self.target_rad = self._next_target(
            torch.minimum(torch.maximum(target, self._lower), self._upper))
        self._buffer.push(self.target_rad)
        self._command_motors(self._buffer.delayed().double())

    def spec(self) -> ActionSpec:
        """Contract entry: the offset term's, with the target range and seeding."""
        return _with_target_range(
            super().spec(), self._lower, self._upper,
            'clip(default_joint_pos_rad + scale * clip(a, -clip, clip), target_min_rad, '
            'target_max_rad); the observed target starts at the measured joint positions '
            '(clipped) at reset and at enable; joint order of joint_names')

    def _next_target(self, goal_rad: torch.Tensor) -> torch.Tensor:
        """The target this tick given the policy's (noisy, clipped) goal: the goal itself."""
        return goal_rad


class JointPositionRateCappedAction(JointPositionTargetAction):
    """The absolute targets moved towards q_home + scale a (clipped to the joint ranges) by at
    most max_rate_rad_s per second from the previous target, which starts at the measured
    joints at reset as at enable on the robot: the deploy node's slew cap, trained in."""

    kind = 'joint_position_rate_capped'

    def __init__(self, env, scale: float = 0.25, clip: float = 1.0,
                 delay_ticks: tuple[int, int] = (0, 0), noise_std: float = 0.0,
                 max_rate_rad_s: float = 8.0, lag_substeps: tuple[int, int] = (0, 0)):
        """JointPositionTargetAction's arguments; max_rate_rad_s: the targets' rate cap."""
        super().__init__(env, scale, clip, delay_ticks, noise_std, lag_substeps)
        self.max_rate_rad_s = max_rate_rad_s

    def _next_target(self, goal_rad: torch.Tensor) -> torch.Tensor:
        """The previous target moved towards the goal by at most max_rate_rad_s x dt."""
        return terms.rate_limited_target(goal_rad, self.target_rad,
                                         self.max_rate_rad_s * self.env.step_dt_s)

    def spec(self) -> ActionSpec:
        """Contract entry: the absolute term's, with the rate cap and its formula."""
        spec = super().spec()
        spec.params['max_rate_rad_s'] = float(self.max_rate_rad_s)
        spec.params['target_formula'] = (
            'q*_prev moved towards clip(default_joint_pos_rad + scale * clip(a, -clip, clip), '
            'target_min_rad, target_max_rad) by at most max_rate_rad_s / policy_rate_hz; '
            'q*_prev seeded with the measured joint positions (clipped) at reset and at '
            'enable; joint order of joint_names')
        return spec


def _with_target_range(spec: ActionSpec, lower: torch.Tensor, upper: torch.Tensor,
                       formula: str) -> ActionSpec:
    """spec with the targets' range [rad], their seeding and formula in its params."""
    spec.params.update({'target_min_rad': lower.tolist(), 'target_max_rad': upper.tolist(),
                        'target_seed': TARGET_SEED, 'target_formula': formula})
    return spec
