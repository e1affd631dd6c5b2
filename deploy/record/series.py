"""A flight log as time series for plots and reports: ticks, puts per stream, calls, the
robot's estimates and, for a HIL recording, the simulated robot's ground truth and events.

Times are seconds since the log's first tick on the node's steady clock; the HIL bridge
stamps its truth and events on the same machine's steady clock, so both line up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import json
from pathlib import Path

import numpy as np

from sim2real.contract import Contract
from sim2real.deploy.record.reader import LogContents
from sim2real.deploy.record.replay import events
from sim2real.deploy.record.json_values import array, number, untyped
from sim2real.deploy.record.truth_recorder import (
    EVENT_TOPIC, METADATA as TRUTH_METADATA, TRUTH_TOPIC)


@dataclass
class Event:
    """Something that happened at a time: a latch, a call, a fault switched on."""

    t_s: float
    """Seconds since the first tick."""
    source: str
    """'node' (the runtime's state and calls) or 'robot' (the HIL bridge)."""
    text: str


@dataclass
class Stream:
    """One stream's samples: receive times and their values by name."""

    t_s: list[float] = field(default_factory=list)
    values: list[dict] = field(default_factory=list)

    def stacked(self, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(times, values stacked) of one value name, None when no sample holds it."""
        rows = [(t, np.asarray(v[name], float).reshape(-1)) for t, v in
                zip(self.t_s, self.values) if name in v and not isinstance(v[name], list)]
        if not rows:
            return None
        return np.array([t for t, _ in rows]), np.stack([v for _, v in rows])


@dataclass
class FlightSeries:
    """Everything a report plots (see the module docstring)."""

    contract: Contract
    params: dict
    """The node's parameters as logged."""
    t0_s: float = 0.0
    tick_t_s: np.ndarray = field(default_factory=lambda: np.zeros(0))
    commands: list[np.ndarray] = field(default_factory=list)
    states: list[tuple[str, str]] = field(default_factory=list)
    estimates: dict[str, Stream] = field(default_factory=dict)
    """Name -> the robot's estimate per tick (Stream of {name: value})."""
    puts: dict[str, Stream] = field(default_factory=dict)
    """Stream name -> what the node received on it."""
    truth: Stream = field(default_factory=Stream)
    """The simulated robot's true state (HIL recordings only)."""
    events: list[Event] = field(default_factory=list)
    truth_metadata: dict[str, str] = field(default_factory=dict)
    """The bridge log's metadata (robot, rates, the true physical parameters)."""

    def received(self, stream: str, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(times, values) of one value of a received stream, None when never received."""
        return self.puts[stream].stacked(name) if stream in self.puts else None

    def estimated(self, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(times, values) of one of the robot's estimates, None when never logged."""
        return self.estimates[name].stacked(name) if name in self.estimates else None

    def command_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        """(times, commands stacked) of the ticks with a command."""
        rows = [(t, c) for t, c in zip(self.tick_t_s, self.commands) if c is not None]
        return np.array([t for t, _ in rows]), np.stack([c for _, c in rows])


def flight_series(contents: LogContents, contract: Contract, params: dict,
                  truth: LogContents | None = None) -> FlightSeries:
    """The series of a node log (and the bridge log of the same HIL run, if given)."""
    series = FlightSeries(contract, params)
    ticks = [record for topic, record in events(contents) if topic.endswith('/tick')]
    if ticks:
        series.t0_s = number(ticks[0]['now_s'])
    t0 = series.t0_s
    series.tick_t_s = np.array([number(r['now_s']) - t0 for r in ticks])
    series.commands = [array(r['command']) for r in ticks]
    series.states = [(r['state'], r['reason']) for r in ticks]
    for t, record in zip(series.tick_t_s, ticks):
        for name, value in (record.get('estimates') or {}).items():
            stream = series.estimates.setdefault(name, Stream())
            stream.t_s.append(float(t))
            stream.values.append({name: array(value)})
    for topic, record in events(contents):
        if topic.endswith('/put'):
            stream = series.puts.setdefault(record['stream'], Stream())
            stream.t_s.append(number(record['received_s']) - t0)
            stream.values.append({k: untyped(v) for k, v in record['values'].items()})
        elif topic.endswith('/call'):
            answer = '' if record['ok'] else f' refused: {record["message"]}'
            series.events.append(Event(number(record['now_s']) - t0, 'node',
                                       f'{record["call"]}{answer}'))
    series.events += state_events(series)
    if truth is not None:
        _add_truth(series, truth)
    series.events.sort(key=lambda e: e.t_s)
    return series


def state_events(series: FlightSeries) -> list[Event]:
    """A 'node' event at each tick whose state or latch reason changed."""
    out, last = [], None
    for t, (state, reason) in zip(series.tick_t_s, series.states):
        now = f'{state}:{reason}' if reason else state
        if now != last:
            out.append(Event(float(t), 'node', f'state {now}'))
            last = now
    return out


def _add_truth(series: FlightSeries, truth: LogContents) -> None:
    """The bridge's true states, events and metadata, on the node's time axis."""
    series.truth_metadata = dict(truth.metadata.get(TRUTH_METADATA, {}))
    for message in truth.messages:
        if message.topic == TRUTH_TOPIC:
            record = json.loads(message.data)
            series.truth.t_s.append(number(record['state_s']) - series.t0_s)
            series.truth.values.append({k: untyped(v) for k, v in record['values'].items()})
        elif message.topic == EVENT_TOPIC:
            record = json.loads(message.data)
            if record.get('event') == 'stall':
                continue   # the simulator's own timing, not the robot's
            text = record['event'] + (f' {record["fault"]}' if record.get('fault') else '')
            series.events.append(Event(number(record['monotonic_s']) - series.t0_s, 'robot',
                                       text))


def truth_folder(log: str | Path) -> Path | None:
    """The bridge's recording beside a node recording made by `hil --record DIR`
    (DIR/policy_node -> DIR/sim_bridge), or None."""
    log = Path(log)
    folder = log if log.is_dir() else log.parent
    sibling = folder.parent / 'sim_bridge'
    return sibling if folder.name == 'policy_node' and any(sibling.glob('*.mcap')) else None
