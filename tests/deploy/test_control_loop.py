"""The policy node's control loop thread: its deadline grid, its timing figures, its failure."""

from __future__ import annotations

import threading
import time

import pytest

from sim2real.deploy.control_loop import FixedRateLoop, next_deadline_s
from sim2real.deploy.loop_stats import LoopStats


def test_the_next_deadline_keeps_the_phase_and_skips_what_a_late_tick_missed():
    """On time: one period on. Woken 2.5 periods late: the missed deadlines are skipped and
    the grid (multiples of 2 ms from 10 s) is kept."""
    assert next_deadline_s(10.0, 10.0001, 0.002) == pytest.approx(10.002)
    assert next_deadline_s(10.0, 10.005, 0.002) == pytest.approx(10.006)
    assert next_deadline_s(10.0, 9.9995, 0.002) == pytest.approx(10.002)   # woke early


def test_the_loop_ticks_at_its_rate_and_reports_how_late_it_woke_and_how_long_it_ran():
    """200 Hz for 1 s: 200 ticks give or take 10 (a loaded 2-core machine), each tick's
    timing under the lock the tick held, at least the 1 ms the tick sleeps."""
    lock, ticks, timings = threading.Lock(), [], []

    def tick():
        assert lock.locked()
        ticks.append(time.monotonic())
        time.sleep(0.001)

    loop = FixedRateLoop(0.005, tick, lock,
                         timing=lambda late_s, tick_s: timings.append((late_s, tick_s)))
    loop.start()
    time.sleep(1.0)
    loop.stop()
    assert not loop.alive()
    assert 190 <= len(ticks) <= 201
    assert len(timings) == len(ticks)
    assert all(late_s >= 0.0 and tick_s >= 0.001 for late_s, tick_s in timings)
    count = len(ticks)
    time.sleep(0.05)
    assert len(ticks) == count   # stopped means stopped


def test_a_failing_tick_ends_the_loop_and_says_so():
    """The tick raises on its third call: the loop keeps the exception, calls on_error once
    and ticks no more (the node then ends instead of running without a loop)."""
    calls, errors = [], []

    def tick():
        calls.append(1)
        if len(calls) == 3:
            raise ZeroDivisionError('tick bug')

    loop = FixedRateLoop(0.002, tick, threading.Lock(), on_error=errors.append)
    loop.start()
    time.sleep(0.2)
    assert not loop.alive()
    assert len(calls) == 3 and len(errors) == 1
    assert isinstance(loop.error, ZeroDivisionError) and errors[0] is loop.error


@pytest.mark.parametrize('period_s', [0.0, -0.002, float('nan')])
def test_a_period_that_is_not_positive_is_refused(period_s):
    """A zero, negative or NaN period is a ValueError naming the value."""
    with pytest.raises(ValueError, match='period_s must be positive'):
        FixedRateLoop(period_s, lambda: None, threading.Lock())


def test_loop_stats_report_the_wake_up_and_tick_percentiles_and_forget_them_at_reset():
    """Ninety-nine ticks woken 0.1 ms late running 0.5 ms and one woken 3 ms late running
    2 ms: p50 0.1 / 0.5 ms; reset empties them and the figures leave the summary."""
    stats = LoopStats(500.0)
    for _ in range(99):
        stats.loop_timing(0.0001, 0.0005)
    stats.loop_timing(0.003, 0.002)
    summary = stats.summary()
    assert summary['wake_late_p50_ms'] == pytest.approx(0.1)
    assert summary['tick_duration_p50_ms'] == pytest.approx(0.5)
    assert 0.1 < summary['wake_late_p99_ms'] < 3.0
    stats.reset()
    assert 'wake_late_p50_ms' not in stats.summary()


def test_a_full_window_keeps_the_last_ticks_only():
    """window 100: 150 periods of 2 ms then 100 of 3 ms (1 ms error each): the error
    percentiles are those of the last 100 periods alone, and the rate counts every tick."""
    stats = LoopStats(500.0, window=100)
    now_s = 0.0
    for period_s in [0.002] * 150 + [0.003] * 100:
        stats.tick(now_s, 1e-4)
        now_s += period_s
    stats.tick(now_s, 1e-4)
    assert len(stats.periods_s) == 100
    assert stats.period_error_ms(50) == pytest.approx(1.0)
    summary = stats.summary()
    assert summary['period_error_p50_ms'] == pytest.approx(1.0)
    assert summary['ticks'] == 251.0
    assert summary['achieved_rate_hz'] == pytest.approx(250 / now_s)
    assert summary['inference_p50_us'] == pytest.approx(100.0)


def test_the_timing_file_holds_every_kept_tick_oldest_first(tmp_path):
    """window 4 over 7 periods of 2, 3, ... 8 ms: the file holds the last 4, oldest first
    (the ring has wrapped), with each tick's wake-up lateness and duration and the target
    period; a folder that does not exist is an OSError naming the file, and no file."""
    import numpy as np
    stats = LoopStats(500.0, window=4)
    now_s = 0.0
    for k, period_s in enumerate([0.002, 0.003, 0.004, 0.005, 0.006, 0.007, 0.008]):
        stats.tick(now_s)
        stats.loop_timing(k * 1e-5, k * 1e-4)
        now_s += period_s
    stats.tick(now_s)
    with np.load(stats.save(tmp_path / 'timing.npz')) as timing:
        assert timing['periods_s'] == pytest.approx([0.005, 0.006, 0.007, 0.008])
        assert timing['wake_late_s'] == pytest.approx([3e-5, 4e-5, 5e-5, 6e-5])
        assert timing['tick_s'] == pytest.approx([3e-4, 4e-4, 5e-4, 6e-4])
        assert float(timing['target_period_s']) == pytest.approx(0.002)
        assert int(timing['ticks']) == 8
    with pytest.raises(OSError, match='missing'):
        stats.save(tmp_path / 'missing' / 'timing.npz')
    assert not (tmp_path / 'missing').exists()


def _fifo_refusal() -> str:
    """Why this process may not use SCHED_FIFO ('' where it may), tried on a thread."""
    from sim2real.deploy.control_loop import set_fifo_priority
    out = []
    thread = threading.Thread(target=lambda: out.append(set_fifo_priority(10)))
    thread.start()
    thread.join()
    return out[0]


def test_the_loop_thread_runs_under_sched_fifo_where_allowed_and_says_so_where_not():
    """priority 10: the loop's own thread (not the caller's) is SCHED_FIFO 10 where this
    process may, and the report says so; where it may not, scheduling and the report name
    the refusal and the loop still ticks."""
    import os
    reports, ticks = [], []
    loop = FixedRateLoop(0.01, lambda: ticks.append(1), threading.Lock(), priority=10,
                         report=lambda text, refused: reports.append((text, refused)))
    loop.start()
    time.sleep(0.2)
    refused = _fifo_refusal()
    try:
        assert ticks and len(reports) == 1
        if refused:
            assert 'refused' in loop.scheduling and reports[0][1] is True
        else:
            assert loop.scheduling == 'SCHED_FIFO 10' and reports[0] == (
                'control loop thread: SCHED_FIFO 10', False)
            assert os.sched_getscheduler(loop._thread.native_id) == os.SCHED_FIFO
            assert os.sched_getparam(loop._thread.native_id).sched_priority == 10
        assert os.sched_getscheduler(0) == os.SCHED_OTHER   # the caller's thread untouched
    finally:
        loop.stop()


@pytest.mark.parametrize('priority', [-1, 100])
def test_a_loop_priority_outside_0_to_99_is_refused_at_start(priority):
    """The node's parameter loop_priority -1 or 100 is a ParamError naming it."""
    from pathlib import Path
    from sim2real.deploy.runtime import ParamError, Runtime
    root = Path(__file__).resolve().parents[2]
    with pytest.raises(ParamError, match='loop_priority'):
        Runtime.from_files(root / 'policies' / 'quadrotor_hover.onnx',
                           root / 'config' / 'quadrotor.yaml',
                           overrides={'loop_priority': priority})


def test_idle_work_gets_the_time_before_the_next_deadline_and_cannot_stop_the_loop():
    """10 ms period: idle(until_s) comes after each tick, outside the lock, with until_s 7.5
    ms after the tick's deadline (the next deadline less IDLE_MARGIN); an idle that raises
    is logged once and the loop ticks on."""
    lock, ticks, idles = threading.Lock(), [], []

    def idle(until_s):
        assert not lock.locked()
        idles.append((time.monotonic(), until_s))
        raise RuntimeError('recorder bug')

    loop = FixedRateLoop(0.010, lambda: ticks.append(time.monotonic()), lock, idle=idle)
    loop.start()
    time.sleep(0.3)
    loop.stop()
    assert len(ticks) >= 20 and len(idles) == len(ticks)
    for tick_s, (idle_s, until_s) in zip(ticks, idles):
        assert tick_s <= idle_s < until_s + 0.005   # called right after its tick
        assert 0.0 < until_s - tick_s <= 0.0075 + 1e-9
