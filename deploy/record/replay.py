"""Replay a runtime log: the logged puts, ticks and calls fed, in their order, to a fresh
Runtime, and what it decided compared with what the logged one decided, tick by tick."""

from __future__ import annotations

from dataclasses import dataclass, field
import json
import math

import numpy as np

from sim2real.deploy.record.reader import LogContents
from sim2real.deploy.record.json_values import array, number
from sim2real.deploy.record.runtime_log import CALL_TOPIC, PUT_TOPIC, sample_from, TICK_TOPIC
from sim2real.deploy.runtime.ood import BandCheck


@dataclass
class ReplayResult:
    """How the replayed runtime's decisions compare with the logged ones."""

    ticks: int = 0
    max_abs_command_diff: float = 0.0
    max_abs_action_diff: float = 0.0
    max_abs_observation_diff: float = 0.0
    first_state_mismatch_tick: int | None = None
    """Index of the first tick whose state or latch reason differs (None: none does)."""
    first_state_mismatch: str = ''
    """What differed there, in words."""
    call_mismatches: list[str] = field(default_factory=list)
    """enable() answers that differ."""
    logged_commands: list[np.ndarray] = field(default_factory=list)
    replayed_commands: list[np.ndarray] = field(default_factory=list)
    now_s: list[float] = field(default_factory=list)
    states: list[tuple[str, str]] = field(default_factory=list)
    """(state, reason) the logged runtime reported at each tick."""
    observations: list[np.ndarray | None] = field(default_factory=list)
    """The replayed runtime's observation at each tick (None where the policy did not run);
    empty unless keep_observations."""
    keep_observations: bool = True
    """Whether observations are kept (a report plots them)."""
    band: BandCheck | None = None
    """The replayed policy's training bands."""
    ood_flags: list[np.ndarray] = field(default_factory=list)
    """Per tick with an observation, the band's per-term flags."""
    ood_first_tick: dict[str, int] = field(default_factory=dict)
    """Term -> index of the first tick it was flagged."""
    policy_start_tick: int | None = None
    """Index of the first tick at which the policy ran (built an observation)."""

    def ood_share(self) -> dict[str, float]:
        """Term -> share of the ticks with an observation at which it was outside its band."""
        if self.band is None or not self.ood_flags:
            return {name: 0.0 for name in (self.band.names if self.band else [])}
        share = np.mean(np.stack(self.ood_flags), axis=0)
        return {name: float(v) for name, v in zip(self.band.names, share)}

    def ood_first_s(self) -> dict[str, float]:
        """Term -> seconds from the policy's first tick (not the log's: a node idles until it
        is armed) to the first at which the term was flagged."""
        start = self.policy_start_tick
        return {name: self.now_s[index] - self.now_s[start]
                for name, index in self.ood_first_tick.items()}

    def summary(self) -> dict:
        """The figures, JSON-ready (no per-tick arrays)."""
        return {'ticks': self.ticks, 'max_abs_command_diff': self.max_abs_command_diff,
                'max_abs_action_diff': self.max_abs_action_diff,
                'max_abs_observation_diff': self.max_abs_observation_diff,
                'first_state_mismatch_tick': self.first_state_mismatch_tick,
                'first_state_mismatch': self.first_state_mismatch or None,
                'call_mismatches': list(self.call_mismatches),
                'policy_ticks': len(self.ood_flags),
                'ood_banded': self.band is not None and bool(self.band.names),
                'ood_share': self.ood_share(), 'ood_first_tick': dict(self.ood_first_tick),
                'ood_first_s': self.ood_first_s()}


def max_abs_diff(logged: np.ndarray | None, replayed: np.ndarray | None) -> float:
    """Largest |difference|; NaN where both are NaN counts 0, where one is: inf; a shape or
    presence difference: inf."""
    if logged is None and replayed is None:
        return 0.0
    if logged is None or replayed is None:
        return math.inf
    a, b = np.asarray(logged, float).reshape(-1), np.asarray(replayed, float).reshape(-1)
    if a.shape != b.shape:
        return math.inf
    with np.errstate(invalid='ignore'):
        same = (a == b) | (np.isnan(a) & np.isnan(b))
        diff = np.where(same, 0.0, np.abs(a - b))
    diff = np.where(np.isnan(diff), math.inf, diff)
    return float(diff.max()) if diff.size else 0.0


def events(contents: LogContents):
    """(topic, record) of the runtime channels in the order they were written."""
    for message in contents.messages:
        if message.topic in (PUT_TOPIC, TICK_TOPIC, CALL_TOPIC):
            yield message.topic, json.loads(message.data)


def replay(contents: LogContents, runtime, keep_observations: bool = True) -> ReplayResult:
    """Feed the log's puts, ticks and calls to runtime (a fresh Runtime); compare.
    keep_observations: hold every tick's observation for a report (off: an hour at 500 Hz
    is not kept in memory)."""
    result = ReplayResult(band=BandCheck(runtime.contract),
                          keep_observations=keep_observations)
    for topic, record in events(contents):
        if topic == PUT_TOPIC:
            runtime.put(record['stream'], sample_from(record))
        elif topic == CALL_TOPIC:
            _call(runtime, record, result)
        else:
            _tick(runtime, record, result)
    return result


def _call(runtime, record: dict, result: ReplayResult) -> None:
    """Replay enable, disable or estop; an enable answered otherwise is noted."""
    now_s = number(record['now_s'])
    if record['call'] == 'enable':
        ok, message = runtime.enable(now_s)
        if (ok, message) != (record['ok'], record['message']):
            result.call_mismatches.append(
                f'enable at {now_s:.6f} s: logged {record["ok"]} {record["message"]!r}, '
                f'replayed {ok} {message!r}')
    elif record['call'] == 'disable':
        runtime.disable(now_s)
    elif record['call'] == 'estop':
        runtime.estop(now_s)


def _tick(runtime, record: dict, result: ReplayResult) -> None:
    """Replay one tick and compare its command, action, observation, state and reason."""
    now_s = number(record['now_s'])
    step = runtime.step(now_s)
    logged = array(record['command'])
    index = result.ticks
    result.ticks += 1
    result.now_s.append(now_s)
    result.states.append((record['state'], record['reason']))
    result.logged_commands.append(logged)
    result.replayed_commands.append(np.asarray(step.command, float))
    if result.keep_observations:
        result.observations.append(None if step.observation is None
                                   else np.asarray(step.observation, float).reshape(-1))
    if step.observation is not None:
        if result.policy_start_tick is None:
            result.policy_start_tick = index
        flags = result.band.outside(step.observation)
        result.ood_flags.append(flags)
        for name, flagged in zip(result.band.names, flags):
            if flagged:
                result.ood_first_tick.setdefault(name, index)
    result.max_abs_command_diff = max(result.max_abs_command_diff,
                                      max_abs_diff(logged, step.command))
    result.max_abs_action_diff = max(result.max_abs_action_diff,
                                     max_abs_diff(array(record['action']), step.action))
    result.max_abs_observation_diff = max(
        result.max_abs_observation_diff,
        max_abs_diff(array(record['observation']), step.observation))
    if result.first_state_mismatch_tick is None and (
            (step.state, step.reason) != (record['state'], record['reason'])):
        result.first_state_mismatch_tick = index
        result.first_state_mismatch = (
            f'tick {index} at {now_s:.6f} s: logged {record["state"]}'
            f'{":" + record["reason"] if record["reason"] else ""}, replayed {step.state}'
            f'{":" + step.reason if step.reason else ""}')
