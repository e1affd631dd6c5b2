"""A fixed-rate control loop on a thread of its own, beside the ROS executor.

As ros2_control's ``ros2_control_node`` runs its read-update-write loop apart from the
executor that serves services and parameters, ``policy_node`` ticks here: the thread sleeps
to each deadline of the steady clock and calls the tick, so a tick costs the tick and one
wake-up, not an executor's wait-set rebuild and dispatch (which cost a 500 Hz rclpy timer
about as much CPU as the tick itself). Missed deadlines are skipped, never run in a burst,
as an rcl timer does (the next deadline is set when a tick starts). The thread's timer
slack is 1 ns (Linux), so a sleep ends within the kernel's wake-up latency of its deadline
rather than up to 50 us after it. After each tick, idle(until_s) may use the time left
before the next deadline (less a margin): the flight recorder encodes its records there.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import math
import os
import threading
import time
from typing import Callable

log = logging.getLogger(__name__)
PR_SET_TIMERSLACK = 29
"""prctl option: this thread's timer slack [ns] (Linux)."""
IDLE_MARGIN = 0.25
"""Share of a period kept free between idle work and the next deadline."""


def next_deadline_s(deadline_s: float, now_s: float, period_s: float) -> float:
    """The first deadline after now_s on the grid deadline_s + k * period_s (k >= 1): a tick
    that ran late keeps the loop's phase and skips the periods it missed."""
    missed = max(0, math.floor((now_s - deadline_s) / period_s))
    return deadline_s + (missed + 1) * period_s


def set_fifo_priority(priority: int) -> str:
    """Put the calling thread under SCHED_FIFO at priority (1-99); '' when done, else why
    not (no permission: CAP_SYS_NICE or an rtprio limit, as a real-time setup grants)."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    except (OSError, AttributeError) as exc:
        return str(exc)
    return ''


def set_timer_slack_ns(slack_ns: int) -> bool:
    """Set the calling thread's timer slack (Linux prctl); False where that is refused."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library('c') or 'libc.so.6', use_errno=True)
        return libc.prctl(PR_SET_TIMERSLACK, ctypes.c_ulong(slack_ns), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


class FixedRateLoop:
    """Calls tick() every period_s of the steady clock on a daemon thread until stop().

    tick runs under ``lock`` (the caller's, shared with whatever else touches the state the
    tick uses); after it, still under the lock, timing(wake_late_s, tick_s) gets how late the
    thread woke after the deadline and how long the tick ran. Then, outside the lock,
    idle(until_s) gets the steady time [s] it must be done by: the next deadline less
    IDLE_MARGIN of a period (an exception there is logged once, the loop goes on).
    priority 1-99 puts the thread under SCHED_FIFO (0: as launched); ``scheduling`` then
    says what it got, and report(text, refused) is told once, from the thread. An exception
    in tick ends the loop: it is logged, kept in ``error`` and on_error(exc) is called, so
    the process can stop instead of running without a loop.
    """

    def __init__(self, period_s: float, tick: Callable[[], None], lock: threading.Lock,
                 timing: Callable[[float, float], None] = lambda late_s, tick_s: None,
                 on_error: Callable[[BaseException], None] = lambda exc: None,
                 priority: int = 0,
                 report: Callable[[str, bool], None] = lambda text, refused: log.info(text),
                 name: str = 'control_loop',
                 idle: Callable[[float], None] | None = None):
        """period_s > 0; tick, timing and on_error as in the class docstring."""
        if not period_s > 0:
            raise ValueError(f'period_s must be positive, got {period_s}')
        if not 0 <= priority <= 99:
            raise ValueError(f'priority must be 0 or 1-99, got {priority}')
        self.period_s, self.priority, self._report = period_s, priority, report
        self.scheduling = 'not started'
        self.error: BaseException | None = None
        self._tick, self._lock, self._timing, self._on_error = tick, lock, timing, on_error
        self._idle, self._idle_failed = idle, False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        """Start ticking; the first tick is one period from now."""
        self._thread.start()

    def stop(self, timeout_s: float = 1.0) -> None:
        """Stop after the tick in progress, waiting at most timeout_s for it."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout_s)

    def alive(self) -> bool:
        """Whether the loop thread still runs."""
        return self._thread.is_alive()

    def _set_scheduling(self) -> None:
        """SCHED_FIFO at the priority asked for, or the reason it was refused."""
        if self.priority == 0:
            self.scheduling = 'as launched'
            return
        refused = set_fifo_priority(self.priority)
        self.scheduling = (f'SCHED_FIFO {self.priority}' if not refused else
                           f'as launched (SCHED_FIFO {self.priority} refused: {refused})')
        self._report(f'control loop thread: {self.scheduling}' + (
            '; grant CAP_SYS_NICE or an rtprio limit, or set loop_priority 0'
            if refused else ''), bool(refused))

    def _run(self) -> None:
        """Sleep to each deadline, tick, skip what a late tick missed."""
        set_timer_slack_ns(1)
        self._set_scheduling()
        deadline_s = time.monotonic() + self.period_s
        while not self._stop.is_set():
            delay_s = deadline_s - time.monotonic()
            if delay_s > 0:
                time.sleep(delay_s)
            if self._stop.is_set():
                return
            woke_s = time.monotonic()
            late_s = woke_s - deadline_s
            # the next deadline is set at the wake-up, as an rcl timer sets it at its call:
            # a slow tick is followed at once by the next, a late wake-up skips what it missed
            deadline_s = next_deadline_s(deadline_s, woke_s, self.period_s)
            try:
                with self._lock:
                    self._tick()
                    self._timing(late_s, time.monotonic() - woke_s)
            except BaseException as exc:   # noqa: B902 -- reported, then the loop ends
                log.critical('control loop stopped by %r', exc, exc_info=True)
                self.error = exc
                self._on_error(exc)
                return
            if self._idle is not None:
                self._run_idle(deadline_s - IDLE_MARGIN * self.period_s)

    def _run_idle(self, until_s: float) -> None:
        """idle(until_s); its first exception is logged, none ends the loop."""
        try:
            self._idle(until_s)
        except Exception:   # noqa: B902 -- idle work must never stop the control loop
            if not self._idle_failed:
                self._idle_failed = True
                log.exception('control loop idle work failed (the loop goes on)')
