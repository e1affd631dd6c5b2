"""Per-env delay line of actions or observations, counted in control ticks.

Array-API code (torch in training, numpy in the HIL bridge). A ring of the last
``max_delay_ticks + 1`` pushed values per env; ``delayed()`` reads, for each env, the value
pushed ``delay_ticks[env]`` pushes ago (0: the latest push). Models the latency between the
policy's output and the motors (action delay) or between the sensors and the policy
(observation delay).
"""

from __future__ import annotations

from array_api_compat import array_namespace

from sim2real.sim.state import Stateful


class DelayBuffer(Stateful):
    """Values of shape (num_envs, *shape) delayed by a per-env whole number of ticks."""

    STATE = ('_history', 'delay_ticks', '_head')
    NOT_STATE = ('_rows',)   # arange(num_envs)

    def __init__(self, num_envs: int, shape: tuple[int, ...], max_delay_ticks: int, xp, dtype,
                 device=None):
        """Ring of max_delay_ticks + 1 entries per env, filled with zeros, no delay."""
        if max_delay_ticks < 0:
            raise ValueError(f'max_delay_ticks must be >= 0, got {max_delay_ticks}')
        self.num_envs = num_envs
        self.shape = tuple(shape)
        self.max_delay_ticks = max_delay_ticks
        kwargs = {} if device is None else {'device': device}
        self._history = xp.zeros((num_envs, max_delay_ticks + 1, *self.shape), dtype=dtype,
                                 **kwargs)
        self.xp = xp = array_namespace(self._history)
        self._rows = xp.arange(num_envs, **kwargs)
        self.delay_ticks = xp.zeros((num_envs,), dtype=xp.int64, **kwargs)
        """Per-env delay in pushes (control ticks), (N,)."""
        self._head = 0

    def set_delay(self, env_ids, ticks) -> None:
        """Delay the output of env_ids by ticks (int or (len(env_ids),) ints) pushes."""
        xp = self.xp
        ticks_arr = xp.asarray(ticks)
        if bool(xp.any(ticks_arr < 0)) or bool(xp.any(ticks_arr > self.max_delay_ticks)):
            raise ValueError(f'delay must lie in [0, {self.max_delay_ticks}] ticks')
        self.delay_ticks[env_ids] = ticks

    def reset(self, env_ids, fill=0.0) -> None:
        """Fill the whole history of env_ids with fill (scalar, shape or (len(ids), *shape))."""
        xp = self.xp
        if getattr(fill, 'ndim', 0) == len(self.shape) + 1:
            fill = xp.expand_dims(fill, axis=1)
        self._history[env_ids, ...] = fill

    def push(self, values) -> None:
        """Append this tick's values (num_envs, *shape)."""
        self._head = (self._head + 1) % (self.max_delay_ticks + 1)
        self._history[:, self._head, ...] = values

    def delayed(self):
        """Per-env values pushed delay_ticks pushes ago, (num_envs, *shape)."""
        slots = (self._head - self.delay_ticks) % (self.max_delay_ticks + 1)
        return self._history[self._rows, slots, ...]
