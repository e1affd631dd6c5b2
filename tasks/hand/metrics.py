"""In-hand metrics (hand.md section 4.3; what ``sim2real eval --json`` reports). In-hand
rotation (hand-rotate):

- ``rotation_rad_per_10s``: per episode, 10 s x the signed rotation of the cube about the palm
  normal summed over control steps until the episode ended (a drop ends it) / the time
  elapsed; HORA's "radians rotated", per 10 s so episodes of any length compare.
- ``drop_rate``: share of episodes that ended before the time-out with the cube off the palm
  (or, rarely, a diverged simulation, which the env ends as a termination too).
- ``guard_rate``: share of episodes ended by the fingertip guard (fingertips that the deploy's
  guard would stop: on the hand, the hold fallback); a step that drops the cube and trips
  the guard counts here, not as a drop.
- ``time_to_fall``: per episode, min(time of the early end, episode length) / episode length
  (1 without a drop or guard stop); HORA's TTF.

Success: no early end and rotation_rad_per_10s >= min_rotation_rad_per_10s. Reorientation
(hand-reorient): ``ReorientMetrics``.
"""

from __future__ import annotations

import torch

from sim2real.device import to_floats
from sim2real.sim.state import Stateful

NAMES = ('rotation_rad_per_10s', 'drop_rate', 'guard_rate', 'time_to_fall')


def split_ends(env, env_ids: torch.Tensor, terminated: torch.Tensor,
               guard_term: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(dropped, guarded) of the terminated episodes of env_ids: guarded where the guard's
    termination term fired (none when the task has no such term), dropped otherwise."""
    fired = env.terminations.last.get(guard_term)
    guarded = terminated & (fired[env_ids].bool() if fired is not None else False)
    return terminated & ~guarded, guarded


class RotationMetrics(Stateful):
    """Accumulates the cube's rotation over each episode and judges success."""

    STATE = ('_rotation_rad', 'last_success', 'last_values', 'finished')
    NOT_STATE = ('env',)

    quantiles: dict[str, float] = {}
    """No percentiles: evaluation reports the means."""

    def __init__(self, env, min_rotation_rad_per_10s: float = 4.0,
                 guard_term: str = 'fingertip_guard'):
        """Success needs no early end and at least this rotation rate [rad per 10 s];
        guard_term: the termination term counted as guard_rate, not as a drop."""
        self.env = env
        self.min_rotation_rad_per_10s = min_rotation_rad_per_10s
        self.guard_term = guard_term
        n = env.num_envs
        self._rotation_rad = torch.zeros(n)
        self.last_success = torch.zeros(n, dtype=torch.bool)
        """Success of each env's most recent finished episode."""
        self.last_values = {name: torch.full((n,), torch.nan) for name in NAMES}
        """Per-env values of the most recent finished episode (NaN: not measured)."""
        self.finished = torch.zeros(n, dtype=torch.long)
        """Number of finished episodes per env."""

    def reset(self, env_ids: torch.Tensor) -> None:
        """Clear the accumulators of env_ids."""
        self._rotation_rad[env_ids] = 0.0

    def update(self) -> None:
        """Add this step's rotation about the palm normal."""
        self._rotation_rad += self.env.scene.cube_rotation_step_rad

    def finish(self, env_ids: torch.Tensor, terminated: torch.Tensor) -> dict[str, float]:
        """Judge the finished episodes of env_ids; returns their mean metrics for logging."""
        env = self.env
        elapsed_s = env.episode_length[env_ids].float() * env.step_dt_s
        measured = elapsed_s > 0
        rate = torch.where(measured, 10.0 * self._rotation_rad[env_ids]
                           / elapsed_s.clamp(min=env.step_dt_s), torch.nan)
        length_s = env.max_episode_length * env.step_dt_s
        time_to_fall = torch.where(terminated, elapsed_s / length_s, 1.0)
        success = ~terminated & measured & (rate >= self.min_rotation_rad_per_10s)
        self.last_success[env_ids] = success
        dropped, guarded = split_ends(env, env_ids, terminated, self.guard_term)
        values = {'rotation_rad_per_10s': rate, 'drop_rate': dropped.float(),
                  'guard_rate': guarded.float(), 'time_to_fall': time_to_fall}
        for name, value in values.items():
            self.last_values[name][env_ids] = value
        self.finished[env_ids] += 1
        log = {'episode/success': success.float().mean(),
               'episode/drop_rate': dropped.float().mean(),
               'episode/guard_rate': guarded.float().mean(),
               'episode/time_to_fall': time_to_fall.mean()}
        if bool(measured.any()):
            log['episode/rotation_rad_per_10s'] = rate[measured].mean()
        return to_floats(log)


REORIENT_NAMES = ('goals_per_minute', 'consecutive_successes', 'drop_rate', 'guard_rate',
                  'time_to_fall')


class ReorientMetrics(Stateful):
    """Goals reached per episode (hand-reorient; hand.md section 4.3):

    - ``goals_per_minute``: goals reached / the episode's duration in minutes.
    - ``consecutive_successes``: goals reached before the episode ended: a drop, a guard stop,
      no goal for the goal timeout, the cap on successes or the time-out; every real anchor
      reports it (Playground, DeXtreme), the median beside the mean.
    - ``drop_rate``, ``guard_rate``, ``time_to_fall``: as hand-rotate's.

    Success: no early end and at least min_goals_per_minute.
    """

    STATE = ('last_success', 'last_values', 'finished')
    NOT_STATE = ('env',)

    quantiles = {'consecutive_successes': 0.5}
    """The median of the consecutive successes beside their mean."""

    def __init__(self, env, command: str = 'goal', min_goals_per_minute: float = 7.5,
                 guard_term: str = 'fingertip_guard'):
        """The goal command's name; success needs this many goals per minute; guard_term as
        RotationMetrics'."""
        self.env = env
        self.command = command
        self.guard_term = guard_term
        self.min_goals_per_minute = min_goals_per_minute
        n = env.num_envs
        self.last_success = torch.zeros(n, dtype=torch.bool)
        """Success of each env's most recent finished episode."""
        self.last_values = {name: torch.full((n,), torch.nan) for name in REORIENT_NAMES}
        """Per-env values of the most recent finished episode (NaN: not measured)."""
        self.finished = torch.zeros(n, dtype=torch.long)
        """Number of finished episodes per env."""

    def reset(self, env_ids: torch.Tensor) -> None:
        """Nothing to clear: the goal command counts the goals."""

    def update(self) -> None:
        """Nothing to accumulate: the goal command counts the goals."""

    def finish(self, env_ids: torch.Tensor, terminated: torch.Tensor) -> dict[str, float]:
        """Judge the finished episodes of env_ids; returns their mean metrics for logging."""
        env = self.env
        goals = env.command(self.command).successes[env_ids].float()
        elapsed_s = env.episode_length[env_ids].float() * env.step_dt_s
        measured = elapsed_s > 0
        per_minute = torch.where(measured, 60.0 * goals / elapsed_s.clamp(min=env.step_dt_s),
                                 torch.nan)
        length_s = env.max_episode_length * env.step_dt_s
        time_to_fall = torch.where(terminated, elapsed_s / length_s, 1.0)
        success = ~terminated & measured & (per_minute >= self.min_goals_per_minute)
        self.last_success[env_ids] = success
        dropped, guarded = split_ends(env, env_ids, terminated, self.guard_term)
        values = {'goals_per_minute': per_minute, 'consecutive_successes': goals,
                  'drop_rate': dropped.float(), 'guard_rate': guarded.float(),
                  'time_to_fall': time_to_fall}
        for name, value in values.items():
            self.last_values[name][env_ids] = value
        self.finished[env_ids] += 1
        log = {'episode/success': success.float().mean(),
               'episode/drop_rate': dropped.float().mean(),
               'episode/guard_rate': guarded.float().mean(),
               'episode/time_to_fall': time_to_fall.mean(),
               'episode/consecutive_successes': goals.mean()}
        if bool(measured.any()):
            log['episode/goals_per_minute'] = per_minute[measured].mean()
        return to_floats(log)
