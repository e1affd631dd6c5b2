"""Quadrotor action terms: what the policy's outputs in [-1, 1] command, with delay."""

from __future__ import annotations

import torch

from sim2real import terms
from sim2real.contract import ActionSpec
from sim2real.mdp.ranges import bounds, sample_int_range
from sim2real.sim.state import Stateful


class _DelayedAction(Stateful):
    """Clips policy outputs, keeps the last ones, and delays them 0..max ticks per env.

    The observed history (``history``) holds the last ``history_ticks`` outputs whatever
    the delay range: the observation layout is fixed by the task, never by a randomization
    range. The delay line behind it is as long as the largest delay drawn.
    """

    STATE = ('last_action', '_history', '_delay')
    NOT_STATE = ('env', 'scene', '_rows')

    size = 4
    kind = ''

    def __init__(self, env, delay_ticks=(0, 0), history_ticks: int = 4):
        """delay_ticks: per-env action delay range in control ticks, drawn at reset (a
        tuple or a PerEnvRange); history_ticks: past outputs the policy observes."""
        if history_ticks < 1:
            raise ValueError(f'history_ticks must be >= 1, got {history_ticks}')
        self.env = env
        self.scene = env.scene
        self.delay_ticks = delay_ticks
        self.history_ticks = history_ticks
        n = env.num_envs
        self.last_action = torch.zeros(n, self.size)
        """Last clipped policy output, (N, 4) (an observation term)."""
        depth = max(history_ticks, int(round(bounds(delay_ticks)[1])) + 1)
        self._history = torch.zeros(n, depth, self.size)
        self._delay = torch.zeros(n, dtype=torch.long)
        self._rows = torch.arange(n)
        self.scene.actuator.mode = self.kind

    @property
    def history(self) -> torch.Tensor:
        """Last clipped outputs, newest first, (N, history_ticks, 4)."""
        return self._history[:, :self.history_ticks]

    @property
    def delay(self) -> torch.Tensor:
        """Per-env action delay [control ticks], (N,)."""
        return self._delay

    def reset(self, env_ids: torch.Tensor) -> None:
        """Zero the history and draw new delays for env_ids."""
        self.last_action[env_ids] = 0.0
        self._history[env_ids] = 0.0
        self._delay[env_ids] = sample_int_range(self.env, env_ids, self.delay_ticks)
        self.scene.actuator.command[env_ids] = self.to_command(self._history[env_ids, 0])

    def process(self, actions: torch.Tensor) -> None:
        """Clip, record and delay the policy outputs; set the actuator command."""
        clipped = actions.clamp(-1.0, 1.0)
        self.last_action = clipped
        self._history = torch.roll(self._history, 1, dims=1)
        self._history[:, 0] = clipped
        delayed = self._history[self._rows, self._delay]
        self.scene.actuator.command = self.to_command(delayed)

    def apply(self, dt_s: float) -> None:
        """Physics-rate callback: run the motor model and write thrusts."""
        self.scene.apply_rotors(dt_s)

    def to_command(self, action: torch.Tensor) -> torch.Tensor:
        """Actuator command for normalized actions."""
        raise NotImplementedError


class ThrustBodyRatesAction(_DelayedAction):
    """Collective thrust and body rates, tracked by the onboard rate controller.

    thrust = ``terms.collective_thrust_n``: 0 at a0 = -1, the nominal hover thrust at 0, the
    rotors' full thrust at +1 [N] (hover_thrust * (1 + a0) capped a vehicle heavier or
    weaker than nominal at 2x the nominal hover thrust, 11 % below what its rotors give);
    body rates = a[1:4] * max_body_rate [rad/s; body frame].
    """

    kind = 'thrust_body_rates'

    def __init__(self, env, max_body_rate_rad_s: float = 6.0, **kwargs):
        """max_body_rate_rad_s: body rate commanded by an output of +-1."""
        self.max_body_rate_rad_s = max_body_rate_rad_s
        super().__init__(env, **kwargs)

    def to_command(self, action: torch.Tensor) -> torch.Tensor:
        """[thrust N, roll, pitch, yaw rate rad/s], float64 for the actuator."""
        scene = self.scene
        thrust = terms.collective_thrust_n(action[:, :1], scene.hover_thrust_n,
                                           4 * scene.rotors.max_thrust_n)
        rates = action[:, 1:] * self.max_body_rate_rad_s
        return torch.cat([thrust, rates], dim=1).double()

    def spec(self) -> ActionSpec:
        """Contract entry of this action interface."""
        return ActionSpec(kind=self.kind, size=self.size, params={
            'hover_thrust_n': self.scene.hover_thrust_n,
            'max_collective_thrust_n': 4 * self.scene.rotors.max_thrust_n,
            'max_body_rate_rad_s': self.max_body_rate_rad_s,
            'thrust_formula': terms.COLLECTIVE_THRUST_FORMULA,
            'rates_formula': 'a[1:4] * max_body_rate_rad_s (roll, pitch, yaw; body frame)',
            'delay_ticks_trained': _trained(self.delay_ticks)})


class RotorSpeedsAction(_DelayedAction):
    """Normalized rotor speed commands, as for on-board deployment (Learning to Fly).

    speed = min + (a + 1) / 2 * (max - min) [rad/s], per rotor in URDF order.
    """

    kind = 'rotor_speeds'

    def to_command(self, action: torch.Tensor) -> torch.Tensor:
        """Rotor speed commands [rad/s], float64 for the actuator."""
        rotors = self.scene.rotors
        return terms.rotor_speed_command(action, rotors.min_speed_rad_s,
                                         rotors.max_speed_rad_s).double()

    def spec(self) -> ActionSpec:
        """Contract entry of this action interface."""
        rotors = self.scene.rotors
        return ActionSpec(kind=self.kind, size=self.size, params={
            'min_speed_rad_s': rotors.min_speed_rad_s,
            'max_speed_rad_s': rotors.max_speed_rad_s,
            'speed_formula': 'min + (a + 1) / 2 * (max - min), rotor order of the URDF',
            'delay_ticks_trained': _trained(self.delay_ticks)})


def _trained(delay_ticks) -> list[int]:
    """The delay range as [low, high] whole ticks for the contract."""
    return [int(round(b)) for b in bounds(delay_ticks)]
