"""Commands held back before the simulated robot applies them: a variant's action delay
(ticks of the policy, physics steps of its training), as a slow link or a servo bus that
writes a tick late."""

from __future__ import annotations

from collections import deque
from typing import Callable


class CommandDelay:
    """Applies each command delay_s [s] after it arrived, in arrival order."""

    def __init__(self, delay_s: float):
        """delay_s >= 0; 0 applies every command on arrival."""
        if not delay_s >= 0:
            raise ValueError(f'command delay must be >= 0 s, got {delay_s}')
        self.delay_s = delay_s
        self._held: deque = deque()

    def offer(self, apply: Callable[[float], None], arrived_s: float) -> None:
        """A command that arrived at arrived_s [s, steady clock]: apply(arrived_s) now (no
        delay), or apply(arrived_s + delay_s) by release() once that time has come (the
        time the robot's driver receives it: its watchdog counts from then)."""
        if self.delay_s == 0:
            apply(arrived_s)
        else:
            self._held.append((arrived_s + self.delay_s, apply))

    def release(self, now_s: float) -> int:
        """Apply the held commands due by now_s [s], oldest first; how many."""
        done = 0
        while self._held and self._held[0][0] <= now_s + 1e-9:
            due_s, apply = self._held.popleft()
            apply(due_s)
            done += 1
        return done

    def clear(self) -> None:
        """Forget the held commands (the robot was reset)."""
        self._held.clear()

    def __len__(self) -> int:
        """Commands held."""
        return len(self._held)
