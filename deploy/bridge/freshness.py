"""Which sensor messages the bridge sent fresh, and when: what judges a stale watchdog.

A message is fresh when every value is finite and its stamp is newer than the stream's last
fresh one. ``sent_by(t_s)`` answers for a past instant (a fault's onset), not for the moment
it is asked: messages may go out between an onset and the event that reports it.
"""

from __future__ import annotations

from collections import deque
import math

import numpy as np

HISTORY = 1024
"""Fresh send times kept per stream (2 s at the default 500 Hz physics rate, a stream's cap)."""


class Freshness:
    """Per stream: the last fresh stamp and the steady times of recent fresh sends."""

    def __init__(self, history: int = HISTORY):
        self._stamp_s: dict[str, float] = {}
        self._sent_s: dict[str, deque] = {}
        self._history = history

    def observe(self, stream: str, values: dict, stamp_s: float, sent_s: float) -> bool:
        """Note a message sent at sent_s [s, steady]; True when it was fresh."""
        fresh = stamp_s > self._stamp_s.get(stream, -math.inf) and all(
            np.all(np.isfinite(v)) for v in values.values())
        if fresh:
            self._stamp_s[stream] = stamp_s
            self._sent_s.setdefault(stream, deque(maxlen=self._history)).append(sent_s)
        return fresh

    def last_sent(self) -> dict[str, float]:
        """Steady send time [s] of each stream's last fresh message so far."""
        return {stream: sent[-1] for stream, sent in self._sent_s.items()}

    def sent_by(self, t_s: float) -> dict[str, float]:
        """Steady send time [s] of each stream's last fresh message sent at or before t_s
        (streams with none in the kept history are left out)."""
        out = {}
        for stream, sent in self._sent_s.items():
            last = next((s for s in reversed(sent) if s <= t_s), None)
            if last is not None:
                out[stream] = last
        return out
