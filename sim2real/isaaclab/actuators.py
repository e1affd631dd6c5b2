"""Actuator models our tasks use that Isaac Lab 3.0 lacks (Isaac Lab venv only).

``DelayedDCMotor``: Isaac Lab's DC motor (PD with the four-quadrant torque-speed limit) whose
position, velocity and effort targets reach the motor a whole number of policy ticks late,
drawn per env at every reset, as our action delay (``delay_ticks`` of the joint position
action). Isaac Lab's own ``DelayedPDActuator`` delays an ideal PD without the torque-speed
limit. The actuator runs once per physics step, and the targets are constant within a
policy tick, so a lag of ticks x decimation physics steps is exactly our delay. Its torque
is scaled per env and joint by ``strength`` (the torque constant's spread; ours scales the
clipped PD torque the same way), which the event ``randomize_motor_strength`` draws.
"""

from __future__ import annotations


def _define() -> dict:
    """The classes (Isaac Lab imported on first use: this module also imports without it)."""
    import torch
    from isaaclab.actuators import DCMotor, DCMotorCfg
    from isaaclab.utils import configclass
    from isaaclab.utils.buffers import DelayBuffer

    class DelayedDCMotor(DCMotor):
        """A DC motor whose targets arrive min..max policy ticks late (uniform per env and
        reset)."""

        def __init__(self, cfg, *args, **kwargs):
            """The DC motor and one delay buffer per target kind."""
            super().__init__(cfg, *args, **kwargs)
            depth = int(cfg.max_delay_ticks) * int(cfg.steps_per_tick)
            self._delays = tuple(DelayBuffer(depth, self._num_envs, device=self._device)
                                 for _ in range(3))
            self.strength = torch.ones(self._num_envs, self.num_joints, device=self._device)
            """Torque-constant multiplier per env and joint, (N, J)."""

        def reset(self, env_ids) -> None:
            """Reset the motor; draw each env's delay in ticks anew and clear its buffers."""
            super().reset(env_ids)
            if env_ids is None:
                env_ids = slice(None)
            count = (len(range(self._num_envs)[env_ids]) if isinstance(env_ids, slice)
                     else len(env_ids))
            ticks = torch.randint(int(self.cfg.min_delay_ticks),
                                  int(self.cfg.max_delay_ticks) + 1, (count,),
                                  dtype=torch.int, device=self._device)
            for buffer in self._delays:
                buffer.set_time_lag(ticks * int(self.cfg.steps_per_tick), env_ids)
                buffer.reset(env_ids)

        def compute(self, control_action, joint_pos, joint_vel):
            """The DC motor's torques for the targets of delay ticks ago."""
            position, velocity, effort = self._delays
            control_action.joint_positions = position.compute(control_action.joint_positions)
            control_action.joint_velocities = velocity.compute(
                control_action.joint_velocities)
            control_action.joint_efforts = effort.compute(control_action.joint_efforts)
            control_action = super().compute(control_action, joint_pos, joint_vel)
            self.applied_effort = self.strength * self.applied_effort
            control_action.joint_efforts = self.applied_effort
            return control_action

    @configclass
    class DelayedDCMotorCfg(DCMotorCfg):
        """DCMotorCfg with a delay in whole policy ticks."""

        class_type: type = DelayedDCMotor
        min_delay_ticks: int = 0
        """Smallest delay [policy ticks]."""
        max_delay_ticks: int = 0
        """Largest delay [policy ticks]."""
        steps_per_tick: int = 1
        """Physics steps per policy tick (the env's decimation)."""

    out = {'DelayedDCMotor': DelayedDCMotor, 'DelayedDCMotorCfg': DelayedDCMotorCfg}
    for name, cls in out.items():   # named as module-level classes (class_type in env.yaml)
        cls.__module__, cls.__qualname__ = __name__, name
    return out


def randomize_motor_strength(env, env_ids, strength_range: tuple[float, float]) -> None:
    """Event term: per-joint torque-constant multiplier ~ U(range) of every delayed DC motor
    of the env's robot, for env_ids (None: every env)."""
    import torch
    low, high = strength_range
    ids = slice(None) if env_ids is None else env_ids
    for actuator in env.scene['robot'].actuators.values():
        if hasattr(actuator, 'strength'):
            rows = actuator.strength[ids]
            actuator.strength[ids] = low + (high - low) * torch.rand_like(rows)


def __getattr__(name: str):
    """DelayedDCMotor and DelayedDCMotorCfg, defined on first access."""
    if name in ('DelayedDCMotor', 'DelayedDCMotorCfg'):
        globals().update(_define())
        return globals()[name]
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
