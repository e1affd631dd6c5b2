"""Fault injection for the HIL bridge's sensor streams and incoming commands.

Time is injected (every method takes ``now_s`` on one steady clock) and randomness comes from
a seeded numpy Generator, so a test replays a fault exactly. Each sensor stream has a FIFO of
messages waiting to be published: ``offer`` applies the active faults to a fresh sample and
queues it with a release time, ``due`` pops what is released by ``now_s``, in order.

Every sensor message is released ``latency_s + U(0, latency_jitter_s)`` after it is offered
(the nominal transport: a servo bus read, USB; 0 by default), faults or not; its stamp stays
the sample's time.

Faults (names as in the spec):

- ``drop``: each message is discarded with probability ``drop_probability``.
- ``delay``: each message is released ``delay_s + U(0, delay_jitter_s)`` after it is
  offered; releases never overtake one another (a stream is FIFO, as one DDS writer is).
- ``frozen_<stream>``: the last sample offered before onset (or the first one during the
  fault, if none) is republished, same values and same stamp, at the normal rate.
- ``nan_<stream>``: values become NaN, stamps advance.
- ``latency_spike``: at onset, every sensor message is held for ``spike_s`` and then all are
  released at once; one spike per onset (it does not repeat while the fault stays on).
- ``command_loss``: ``commands_allowed`` is False; the bridge discards incoming commands.

A robot's twin adds faults of its own (RobotFault: the quadrotor's glitched odometry sample
and world-frame twist, the quadruped's push): a change to one stream's samples as a
function of the time since onset (which may withhold a sample), and an action on the
simulation before every physics step.
"""

from __future__ import annotations

import collections
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

GENERIC_FAULTS = ('drop', 'delay', 'latency_spike', 'command_loss')
"""Faults of every bridge: all sensor streams at once, or the incoming commands."""
STREAM_FAULTS = ('frozen', 'nan')
"""Faults of one sensor stream, named '<kind>_<stream>' (frozen_imu, nan_joint_states)."""


def fault_names(streams, extra=()) -> tuple[str, ...]:
    """Every fault name of a bridge with these sensor streams (and a robot's own, extra)."""
    return GENERIC_FAULTS + tuple(f'{kind}_{stream}' for kind in STREAM_FAULTS
                                  for stream in streams) + tuple(extra)


@dataclass(frozen=True)
class RobotFault:
    """A fault a robot's twin adds to the generic ones."""

    stream: str = ''
    """The sensor stream whose samples transform changes ('' for none)."""
    transform: Callable[[dict, float], dict | None] | None = None
    """(values, seconds since onset) -> the values to publish, or None to withhold them."""
    act: Callable[[object, float | None], None] | None = None
    """(sim, seconds since onset, None while inactive): acts on the simulated robot before
    every physics step (and undoes its action when the fault is off)."""
    effect: Callable[[dict, dict], bool] | None = None
    """(values offered, values published) -> whether the node can now see the fault: the
    first such sample is the fault's effect (a 'fault_effect' event when it goes out)."""
    reset: Callable[[], None] | None = None
    """Called at each onset (a fault that keeps state between samples starts over)."""
    configure: Callable[[dict], None] | None = None
    """Called once with the bridge's parameters (a fault that depends on them)."""


_RELEASE_EPS_S = 1e-9   # a release at t + delay is due at now = t + delay despite rounding


class FaultError(ValueError):
    """A fault name or fault schedule is not valid."""


@dataclass
class FaultCfg:
    """Magnitudes of the sensor faults."""

    drop_probability: float = 0.3
    """Probability that one message is dropped while 'drop' is active."""
    delay_s: float = 0.01
    """Fixed part of the delay while 'delay' is active [s]."""
    delay_jitter_s: float = 0.005
    """Width of the uniform random extra delay [s]."""
    spike_s: float = 0.2
    """How long 'latency_spike' holds every sensor message after its onset [s]."""
    latency_s: float = 0.0
    """Nominal latency of every sensor message, fault or not [s]."""
    latency_jitter_s: float = 0.0
    """Width of the uniform random extra nominal latency [s]."""


@dataclass(frozen=True)
class ScheduledFault:
    """One entry of a fault schedule: active on [start_s, start_s + duration_s)."""

    name: str
    start_s: float
    """Onset relative to the schedule's origin (bridge start or reset) [s]."""
    duration_s: float
    """How long it stays active [s]."""


@dataclass(frozen=True)
class BridgeEvent:
    """Something the bridge reports on ~/events: fault on/off, release, watchdog, reset."""

    event: str
    fault: str
    monotonic_s: float


def _valid(name: str, streams, extra=()) -> bool:
    """name is a fault of these streams or one of extra (streams None: of any stream)."""
    if streams is not None or name in extra:
        return name in fault_names(streams or (), extra)
    kind, _, stream = name.partition('_')
    return name in GENERIC_FAULTS or (kind in STREAM_FAULTS and bool(stream))


def validate_names(names, streams=None, extra=()) -> tuple[str, ...]:
    """The names as a tuple; FaultError naming the unknown ones and listing the valid ones
    (faults of these sensor streams and the robot's own, extra; None: '<kind>_<stream>' of
    any stream)."""
    names = tuple(names)
    unknown = [n for n in names if not _valid(n, streams, extra)]
    if unknown:
        valid = fault_names(streams if streams is not None else ('<stream>',), extra)
        raise FaultError(f'unknown fault(s) {", ".join(map(repr, unknown))}; '
                         f'valid: {", ".join(valid)}')
    return names


def parse_fault_list(text: str, streams=None, extra=()) -> tuple[str, ...]:
    """Validated fault names from a comma list such as 'drop, nan_imu' ('' -> none)."""
    return validate_names((n.strip() for n in text.split(',') if n.strip()), streams, extra)


def parse_schedule(text: str, streams=None, extra=()) -> tuple[ScheduledFault, ...]:
    """Parse 'name@start_s+duration_s;...' (whitespace and empty entries ignored)."""
    entries = []
    for raw in text.split(';'):
        entry = raw.strip()
        if not entry:
            continue
        name, at, timing = entry.partition('@')
        start, plus, duration = timing.partition('+')
        try:
            start_s, duration_s = float(start), float(duration)
        except ValueError:
            start_s = duration_s = math.nan
        if not (at and plus and math.isfinite(start_s) and math.isfinite(duration_s)):
            raise FaultError(f'fault schedule entry {entry!r} is not '
                             "'name@start_s+duration_s', e.g. 'nan_imu@2.0+0.5'")
        if start_s < 0 or duration_s <= 0:
            raise FaultError(f'fault schedule entry {entry!r}: start_s must be >= 0 and '
                             'duration_s > 0')
        validate_names([name.strip()], streams, extra)
        entries.append(ScheduledFault(name.strip(), start_s, duration_s))
    return tuple(entries)


class FaultInjector:
    """Applies the active faults to sensor messages and commands, seeded, time injected."""

    def __init__(self, cfg: FaultCfg | None = None, streams=('odom', 'imu'), seed: int = 0,
                 robot_faults: dict[str, RobotFault] | None = None):
        """Fault magnitudes, the sensor stream names, the RNG seed and the robot's faults."""
        self.cfg = cfg or FaultCfg()
        self.streams = tuple(streams)
        self.robot_faults = dict(robot_faults or {})
        self._onset_s: dict[str, float] = {}
        self._effect_seen: set[str] = set()
        self._released_effects: list[str] = []
        self._rng = np.random.default_rng(seed)
        self._manual: frozenset[str] = frozenset()
        self._schedule: tuple[ScheduledFault, ...] = ()
        self._origin_s = 0.0
        self._active: frozenset[str] = frozenset()
        self._events: list[BridgeEvent] = []
        self._queues = {s: collections.deque() for s in self.streams}
        self._last: dict[str, tuple] = {}
        self._frozen: dict[str, tuple] = {}
        self._spike_until_s = -math.inf

    def set_active(self, names, now_s: float) -> None:
        """Replace the manual faults (names or a comma list; validated); the schedule stays."""
        if isinstance(names, str):
            names = parse_fault_list(names, self.streams, self.robot_faults)
        self._manual = frozenset(validate_names(names, self.streams, self.robot_faults))
        self.update(now_s)

    def set_schedule(self, schedule, origin_s: float) -> None:
        """Use a schedule (string or ScheduledFault entries) relative to origin_s."""
        self._schedule = parse_schedule(schedule, self.streams, self.robot_faults) if isinstance(
            schedule, str) else tuple(schedule)
        self._origin_s = origin_s
        self.update(origin_s)

    def reset(self, now_s: float) -> None:
        """Clear manual faults and queues; restart the schedule from now_s."""
        self._manual = frozenset()
        for queue in self._queues.values():
            queue.clear()
        self._last.clear()
        self._released_effects.clear()
        self._spike_until_s = -math.inf
        for name in sorted(self._active):   # a fault still scheduled starts over
            self._frozen.pop(name.removeprefix('frozen_'), None)
            self._events.append(BridgeEvent('fault_off', name, now_s))
        self._active = frozenset()
        self.set_schedule(self._schedule, now_s)

    def update(self, now_s: float) -> frozenset[str]:
        """Evaluate the schedule at now_s, record onset/offset events, return active faults."""
        t = now_s - self._origin_s
        scheduled = {f.name for f in self._schedule if f.start_s <= t < f.start_s + f.duration_s}
        active = self._manual | scheduled
        for name in sorted(active - self._active):
            self._onset_s[name] = now_s
            self._effect_seen.discard(name)
            if name in self.robot_faults and self.robot_faults[name].reset is not None:
                self.robot_faults[name].reset()
            self._on_onset(name, now_s)
            self._events.append(BridgeEvent('fault_on', name, now_s))
        for name in sorted(self._active - active):
            self._frozen.pop(name.removeprefix('frozen_'), None)
            self._events.append(BridgeEvent('fault_off', name, now_s))
        self._active = frozenset(active)
        return self._active

    def _on_onset(self, name: str, now_s: float) -> None:
        """Capture the frozen sample or start the latency spike."""
        if name.startswith('frozen_'):
            stream = name.removeprefix('frozen_')
            if stream in self._last:
                self._frozen[stream] = self._last[stream]
        elif name == 'latency_spike':
            self._spike_until_s = now_s + self.cfg.spike_s

    def pop_events(self) -> list[BridgeEvent]:
        """Onset/offset events since the last call, oldest first."""
        events, self._events = self._events, []
        return events

    def commands_allowed(self, now_s: float) -> bool:
        """False while 'command_loss' is active."""
        return 'command_loss' not in self.update(now_s)

    def act(self, sim, now_s: float) -> None:
        """Let each robot fault with an action act on the simulation (before a physics
        step at now_s): with the time since its onset, or None while it is off."""
        active = self.update(now_s)
        for name, fault in self.robot_faults.items():
            if fault.act is not None:
                fault.act(sim, now_s - self._onset_s[name] if name in active else None)

    def _robot_transform(self, stream: str, values: dict, active, now_s: float):
        """values through the active robot faults of this stream (None: withheld) and the
        faults whose effect these published values are the first of."""
        effects = []
        for name, fault in self.robot_faults.items():
            if name not in active or fault.stream != stream or fault.transform is None:
                continue
            out = fault.transform(values, now_s - self._onset_s[name])
            if out is None:
                return None, effects
            if fault.effect is not None and name not in self._effect_seen and fault.effect(
                    values, out):
                self._effect_seen.add(name)
                effects.append(name)
            values = out
        return values, effects

    def offer(self, stream: str, values: dict, stamp_s: float, now_s: float) -> None:
        """Queue a fresh sample of a stream with the active faults applied."""
        active = self.update(now_s)
        values, effects = self._robot_transform(stream, values, active, now_s)
        if values is None:
            return
        sample = ({k: np.array(v, dtype=np.float64) for k, v in values.items()}, stamp_s)
        if f'frozen_{stream}' in active:
            sample = self._frozen.setdefault(stream, self._last.get(stream, sample))
        else:
            self._last[stream] = sample
        if 'drop' in active and self._rng.random() < self.cfg.drop_probability:
            return
        if f'nan_{stream}' in active:
            sample = ({k: np.full_like(v, np.nan) for k, v in sample[0].items()}, sample[1])
        release_s = now_s + self.cfg.latency_s
        if self.cfg.latency_jitter_s > 0:   # no draw without jitter: seeded replays hold
            release_s += self._rng.uniform(0.0, self.cfg.latency_jitter_s)
        if 'delay' in active:
            release_s += self.cfg.delay_s + self._rng.uniform(0.0, self.cfg.delay_jitter_s)
        if now_s < self._spike_until_s:
            release_s = max(release_s, self._spike_until_s)
        queue = self._queues[stream]
        if queue:
            release_s = max(release_s, queue[-1][0])
        queue.append((release_s, sample, tuple(effects)))

    def due(self, stream: str, now_s: float) -> list[tuple[dict, float]]:
        """(values, stamp_s) of the stream's messages released by now_s, in order."""
        queue = self._queues[stream]
        out = []
        while queue and queue[0][0] <= now_s + _RELEASE_EPS_S:
            _, (values, stamp_s), effects = queue.popleft()
            self._released_effects.extend(effects)
            out.append(({k: v.copy() for k, v in values.items()}, stamp_s))
        return out

    def pop_effects(self) -> list[str]:
        """Robot faults whose first effect was among the samples due() released since the
        last call (RobotFault.effect)."""
        effects, self._released_effects = self._released_effects, []
        return effects
