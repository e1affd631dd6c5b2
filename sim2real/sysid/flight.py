"""A flight log as arrays for identification: each sensor stream's samples on the steady
clock, the commands the node sent and when, its safety states, and the logged contract.

The node logs each sample with its stamp (the robot's clock: a driver's, the bridge's) and
its steady receive time. A stream's samples are placed on the steady clock by its stamps
plus the median of (receive time - stamp): the stamps keep the samples' spacing exact, the
median maps the clocks with the transport latency in it (what a delay parameter then
absorbs). Commands are placed at their tick's steady time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import json
from pathlib import Path

import numpy as np

from sim2real.contract import Contract
from sim2real.deploy.record.json_values import array, number, untyped
from sim2real.deploy.record.rebuild import read_logs
from sim2real.deploy.record.runtime_log import PUT_TOPIC, TICK_TOPIC


@dataclass
class Stream:
    """One sensor stream's samples, oldest first."""

    t_s: np.ndarray
    """(n,) sample times on the steady clock [s]."""
    values: dict[str, np.ndarray]
    """Value name -> (n, k) samples (a sample missing a value: NaN)."""


@dataclass
class Flight:
    """What identification reads of one flight log."""

    streams: dict[str, Stream]
    tick_t_s: np.ndarray
    """(m,) steady time of each control tick [s]."""
    commands: np.ndarray
    """(m, k) the command each tick sent."""
    states: list[str]
    """The safety state of each tick ('active', 'fallback:stale', ...)."""
    contract: Contract
    damage: str | None = None
    """Where reading stopped early (a damaged file), or None."""
    clock_offset_s: dict[str, float] = field(default_factory=dict)
    """Stream -> median (receive time - stamp) [s]: the stamp clock's place on the steady
    clock, latency included."""

    @property
    def tick_s(self) -> float:
        """The policy's period [s]."""
        return 1.0 / self.contract.policy_rate_hz

    def active_spans(self, min_s: float = 0.0) -> list[tuple[float, float]]:
        """(start, end) steady times [s] of each run of ticks in which the policy was in
        control ('active'), at least min_s long."""
        active = np.array([s == 'active' for s in self.states])
        spans, start = [], None
        for t, on in zip(self.tick_t_s, active):
            if on and start is None:
                start = t
            elif not on and start is not None:
                spans.append((start, t))
                start = None
        if start is not None:
            spans.append((start, float(self.tick_t_s[-1])))
        return [(float(a), float(b)) for a, b in spans if b - a >= min_s]


def load_flight(path: str | Path) -> Flight:
    """A node's flight log (a file, or the folder of a rotated recording) as a Flight;
    ValueError when it holds no ticks or no contract."""
    contents = read_logs(path)
    if 'contract.json' not in contents.attachments:
        raise ValueError(f'{path}: not a sim2real flight log (no contract attached)')
    contract = Contract.from_json(contents.attachments['contract.json'].decode())
    samples: dict[str, list] = {}
    ticks_t, commands, states = [], [], []
    for message in contents.messages:
        if message.topic == PUT_TOPIC:
            record = json.loads(message.data)
            values = {k: np.asarray(untyped(v), dtype=float).ravel()
                      for k, v in record['values'].items() if 'array' in v}
            samples.setdefault(record['stream'], []).append(
                (number(record['stamp_s']), number(record['received_s']), values))
        elif message.topic == TICK_TOPIC:
            record = json.loads(message.data)
            command = array(record['command'])
            if command is None:
                continue
            ticks_t.append(number(record['now_s']))
            commands.append(command.ravel())
            states.append(record['state'])
    if not ticks_t:
        raise ValueError(f'{path}: no control ticks logged')
    streams, offsets = {}, {}
    for name, rows in samples.items():
        streams[name], offsets[name] = _stream(rows)
    return Flight(streams, np.asarray(ticks_t), np.vstack(commands), states, contract,
                  contents.damage, offsets)


def _stream(rows: list) -> tuple[Stream, float]:
    """One stream's (stamp, receive time, values) rows on the steady clock, and the offset
    used [s]."""
    stamps = np.array([r[0] for r in rows])
    received = np.array([r[1] for r in rows])
    finite = np.isfinite(stamps) & np.isfinite(received)
    offset_s = float(np.median(received[finite] - stamps[finite])) if finite.any() else 0.0
    order = np.argsort(stamps, kind='stable')
    names = sorted({k for r in rows for k in r[2]})
    values = {}
    for name in names:
        width = max(len(r[2][name]) for r in rows if name in r[2])
        table = np.full((len(rows), width), np.nan)
        for i, r in enumerate(rows):
            if name in r[2] and len(r[2][name]) == width:
                table[i] = r[2][name]
        values[name] = table[order]
    return Stream(stamps[order] + offset_s, values), offset_s
