"""`sim2real gap`: the sim-to-real gap of a flight log as numbers.

The log's commands are replayed in the task's simulator (its identification plant, the
task's ``sysid`` module) over short windows, each started from the measured state at its
start (multiple shooting: a replay never runs long enough to drift from the log for reasons
that have nothing to do with the model). Per signal the gap is the RMS error of the
prediction, normalized by the RMS error of holding the signal at its value at the window's
start: 0 is a perfect simulator, 1 one no better than predicting that nothing changes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
import importlib

import numpy as np

from sim2real.sysid.flight import Flight

WINDOW_S = 0.5
"""Length of a window [s]."""
WINDOWS = 40
"""Windows per log, spread evenly over the spans the policy was in control."""


@dataclass(frozen=True)
class SignalGap:
    """One signal's gap."""

    unit: str
    rms: float
    """RMS error of the replay [unit]."""
    held_rms: float
    """RMS error of holding the window's start value [unit]."""

    @property
    def normalized(self) -> float:
        """rms / held_rms (0: the simulator matches; 1: no better than holding)."""
        return self.rms / self.held_rms if self.held_rms > 0 else float('inf')


@dataclass(frozen=True)
class GapResult:
    """The gap of one log for one set of parameters."""

    task: str
    params: dict
    """The parameters given (box name -> value); the others were nominal."""
    windows: int
    window_s: float
    signals: dict[str, SignalGap]

    @property
    def gap(self) -> float:
        """The mean of the signals' normalized gaps."""
        return float(np.mean([s.normalized for s in self.signals.values()]))

    def as_dict(self) -> dict:
        """The JSON form: every figure, the overall gap first (a gap that could not be
        formed, a signal that never moved, as None)."""
        return {'gap': _finite(self.gap), 'task': self.task, 'params': self.params,
                'windows': self.windows, 'window_s': self.window_s,
                'signals': {name: {**asdict(s), 'normalized': _finite(s.normalized)}
                            for name, s in self.signals.items()}}


def _finite(value: float) -> float | None:
    """value, or None where it is not finite (JSON has no infinity)."""
    return value if np.isfinite(value) else None


def plant_of(task: str):
    """The task's identification plant module; ValueError when it has none."""
    from sim2real.tasks import get_task
    spec = get_task(task)
    if spec.sysid is None:
        raise ValueError(f'task "{task}" has no identification plant (TaskSpec.sysid)')
    return importlib.import_module(spec.sysid)


GAP_PERIODS = 3.0
"""A window (with its warm-up) whose samples pause longer than this many sample periods is
left out: a stalled simulator or a lost link moved on without the log."""


def window_starts(flight: Flight, times_s: np.ndarray, window_s: float, count: int,
                  warm_s: float) -> np.ndarray:
    """Indices into times_s of up to count window starts, evenly spread over the spans the
    policy was in control, each with warm_s of log before it and window_s after it inside
    its span and no pause in its samples (GAP_PERIODS); ValueError when none fits."""
    candidates = np.zeros(len(times_s), dtype=bool)
    for start_s, end_s in flight.active_spans():
        candidates |= (times_s >= start_s + warm_s) & (times_s <= end_s - window_s)
    steps = np.diff(times_s)
    if len(steps):
        pauses = times_s[1:][steps > GAP_PERIODS * np.median(steps)]
        for pause_s in pauses:   # no window (or its warm-up) may reach over a pause
            candidates &= ~((times_s > pause_s - window_s - 1e-9)
                            & (times_s < pause_s + warm_s + 1e-9))
    index = np.flatnonzero(candidates)
    if not len(index):
        raise ValueError(f'no {window_s:g} s window with {warm_s:g} s before it in a span '
                         'the policy was in control: the log is too short or never active')
    return index[np.unique(np.linspace(0, len(index) - 1, min(count, len(index))).round()
                           .astype(int))]


def gap(flight: Flight, task: str, params: dict | None = None, window_s: float = WINDOW_S,
        count: int = WINDOWS) -> GapResult:
    """The gap of a flight in the task's simulator with params (box parameters; missing ones
    nominal)."""
    plant = plant_of(task)
    params = dict(params or {})
    check_params(params, plant, task)
    measured, commands = plant.from_flight(flight)
    starts = window_starts(flight, measured.t_s, window_s, count, plant.WARM_S)
    predicted = plant.replay(measured, commands, flight.tick_s, starts, window_s, params)
    actual = plant.measured_signals(measured, starts, window_s)
    held = plant.held_signals(measured, starts, window_s)
    signals = {name: SignalGap(unit, _rms(predicted[name], actual[name]),
                               _rms(held[name], actual[name]))
               for name, unit in plant.SIGNALS.items()}
    return GapResult(task, params, len(starts), window_s, signals)


def check_params(params: dict, plant, task: str) -> None:
    """ValueError naming a parameter the plant does not take, or a value outside its
    BOUNDS (a *_ticks parameter must be a whole number)."""
    unknown = sorted(set(params) - set(plant.PARAMETERS))
    if unknown:
        raise ValueError(f'parameters {unknown} are not those of the {task} plant: '
                         f'{", ".join(plant.PARAMETERS)}')
    for name, value in params.items():
        low, high = plant.BOUNDS[name]
        if not (np.isfinite(value) and low <= value <= high):
            raise ValueError(f'{name}={value:g}: the {task} plant takes {low:g} to {high:g}')
        if name.endswith('_ticks') and value != round(value):
            raise ValueError(f'{name}={value:g}: must be a whole number')


def _rms(predicted: list[np.ndarray], actual: list[np.ndarray]) -> float:
    """RMS of the differences over every window and component."""
    for p, a in zip(predicted, actual):
        if p.shape != a.shape:
            raise RuntimeError(f'a window predicted {p.shape} samples for {a.shape} measured')
    return float(np.sqrt(np.mean(np.concatenate(
        [(p - a).ravel() for p, a in zip(predicted, actual)]) ** 2)))
