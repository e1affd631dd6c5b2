"""Arming state machine: inactive -> soft_start -> active -> fallback (latched until enable)."""

from __future__ import annotations

from sim2real.deploy.runtime.filters import soft_start_fraction

INACTIVE = 'inactive'
SOFT_START = 'soft_start'
ACTIVE = 'active'
FALLBACK = 'fallback'
ARMED = (SOFT_START, ACTIVE)


class StateMachine:
    """Holds the state, the latch reason and the times of the last enable and latch."""

    def __init__(self, soft_start_s: float):
        """Start inactive; soft_start_s is the blend time after enable [s]."""
        self.soft_start_s = soft_start_s
        self.state = INACTIVE
        self.reason = ''
        self.enabled_s = 0.0
        """Steady-clock time of the last enable [s]."""
        self.latched_s = 0.0
        """Steady-clock time the fallback latched [s]."""
        self.latched_from = INACTIVE
        """State the fallback latched from."""

    @property
    def armed(self) -> bool:
        """True in soft_start and active."""
        return self.state in ARMED

    def enable(self, now_s: float) -> None:
        """Arm: soft_start from inactive or fallback (clears the latch); no-op when armed."""
        if self.armed:
            return
        self.state, self.reason, self.enabled_s = SOFT_START, '', now_s

    def disable(self) -> None:
        """Back to inactive, latch cleared."""
        self.state, self.reason = INACTIVE, ''

    def latch(self, reason: str, now_s: float) -> None:
        """Enter fallback with reason; an existing latch keeps its reason unless this is estop."""
        if self.state == FALLBACK:
            if reason == 'estop':
                self.reason = reason
            return
        self.latched_from = self.state
        self.state, self.reason, self.latched_s = FALLBACK, reason, now_s

    def soft_start_fraction(self, now_s: float) -> float:
        """Elapsed share of the soft start in [0, 1]; moves soft_start -> active at 1."""
        fraction = soft_start_fraction(now_s - self.enabled_s, self.soft_start_s)
        if self.state == SOFT_START and fraction >= 1.0:
            self.state = ACTIVE
        return fraction
