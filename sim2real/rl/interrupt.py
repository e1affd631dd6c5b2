"""Ctrl-C during training as a request: finish the iteration in progress, save, stop."""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from typing import Iterator

logger = logging.getLogger(__name__)


class StopRequest:
    """Whether SIGINT asked the loop to stop (set by the handler of deferred_sigint)."""

    def __init__(self):
        """Not requested yet."""
        self.requested = False


@contextlib.contextmanager
def deferred_sigint() -> Iterator[StopRequest]:
    """Within: the first SIGINT (Ctrl-C) sets request.requested instead of raising, so the
    loop can end its iteration and save a checkpoint; a second one raises KeyboardInterrupt
    at once. Outside the main thread nothing changes (signals reach only that thread)."""
    request = StopRequest()
    if threading.current_thread() is not threading.main_thread():
        yield request
        return

    def handle(signum, frame) -> None:
        """First: ask to stop; second: interrupt now."""
        if request.requested:
            raise KeyboardInterrupt
        request.requested = True
        logger.warning('Ctrl-C: stopping after the iteration in progress and saving a '
                       'checkpoint (Ctrl-C again to stop at once, losing that iteration)')

    previous = signal.signal(signal.SIGINT, handle)
    try:
        yield request
    finally:
        signal.signal(signal.SIGINT, previous)
