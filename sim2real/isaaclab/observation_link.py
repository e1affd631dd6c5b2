"""Our policy observations' link in Isaac Lab: one delay, jitter and dropout per env for the
whole group, as our env delivers them (Isaac Lab venv only).

Ours (``sim2real.mdp.managers.ObservationManager``) delays a group's delayed terms together:
per env a delay drawn from ``delay_ticks`` at every reset, one tick more with probability
``jitter_prob`` at each tick (at most the deepest delay), or, with the env's dropout
probability (drawn from ``dropout_prob`` at every reset), the previous delivered vector again:
the deploy node holding its last sample. Isaac Lab 3.0 draws each term's lag on its own.

``LinkedTerm`` wraps one observation function: its value, with our Gaussian noise (raw units,
before the delay, so that a held sample repeats exactly), goes into the term's own ring of
the last ticks, and the term delivers the entry at the lag, or its last delivered value,
that the env's ``ObservationLink`` decides once per policy step for every linked term. A
tick is ``env.common_step_counter``: reads within one step deliver the same values (envs
reset in between read their fresh value), as our env computes once per step. The step's
first read decides the tick, so it must come after the step's resets, command resampling
and interval events, as in Isaac Lab's step() unless recorders or ``compute_final_obs``
read before the resets (our env configs set neither). The noise is decided when the env
config is built (none when the group adds none), not by ``enable_corruption`` later.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

LINK_ATTR = '_sim2real_observation_link'
"""Attribute of the Isaac Lab env that holds its ObservationLink."""


@dataclass
class ObservationLink:
    """Per-env delay and dropout draws of one env's linked terms, and each tick's decision."""

    delay_ticks: tuple[int, int]
    """(fewest, most) ticks of delay, drawn per env at each reset."""
    jitter_prob: float
    """Probability that a tick's value arrives one tick later (at most max delay)."""
    dropout_prob: tuple[float, float]
    """Range of the per-env probability that a tick delivers the previous value again."""
    delay: torch.Tensor
    """Each env's delay [ticks], (N,)."""
    drop_prob: torch.Tensor
    """Each env's dropout probability, (N,)."""
    owned: bool = False
    """Whether a term draws the link's per-env values at resets (the first term made)."""
    _tick: int = -1
    _decision: tuple[torch.Tensor, torch.Tensor] | None = field(default=None, repr=False)

    @property
    def depth(self) -> int:
        """Ticks a term's ring holds: the current one and the oldest a tick can deliver
        (the largest delay, one more with jitter), as ours (ObsGroupCfg.max_delay_ticks)."""
        return int(self.delay_ticks[1]) + (1 if self.jitter_prob > 0.0 else 0) + 1

    def reset(self, env_ids: torch.Tensor) -> None:
        """Draw the delay and the dropout probability of env_ids."""
        low, high = self.delay_ticks
        self.delay[env_ids] = torch.randint(int(low), int(high) + 1, (len(env_ids),),
                                            device=self.delay.device)
        low_p, high_p = self.dropout_prob
        self.drop_prob[env_ids] = low_p + (high_p - low_p) * torch.rand(
            len(env_ids), device=self.drop_prob.device)

    def decide(self, tick: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(lag [ticks], dropped) of every env at this tick, (N,) each; one draw per tick."""
        if tick != self._tick or self._decision is None:
            lag = self.delay.clone()   # a later reset redraws delay in place
            if self.jitter_prob > 0.0:
                late = torch.rand(lag.shape, device=lag.device) < self.jitter_prob
                lag = (lag + late.long()).clamp(max=self.depth - 1)
            dropped = torch.rand(lag.shape, device=lag.device) < self.drop_prob
            self._tick, self._decision = tick, (lag, dropped)
        return self._decision


def link_of(env, delay_ticks, jitter_prob: float, dropout_prob) -> ObservationLink:
    """env's ObservationLink, made on first use (every linked term passes the same ranges;
    another range is refused, one link serves one group)."""
    ranges = ((int(delay_ticks[0]), int(delay_ticks[1])), float(jitter_prob),
              (float(dropout_prob[0]), float(dropout_prob[1])))
    link = getattr(env, LINK_ATTR, None)
    if link is None:
        n = env.num_envs
        link = ObservationLink(*ranges, delay=torch.zeros(n, dtype=torch.long, device=env.device),
                               drop_prob=torch.zeros(n, device=env.device))
        link.reset(torch.arange(n, device=env.device))
        setattr(env, LINK_ATTR, link)
    elif (link.delay_ticks, link.jitter_prob, link.dropout_prob) != ranges:
        raise ValueError(f'linked observation terms with different links: {ranges} and '
                         f'{(link.delay_ticks, link.jitter_prob, link.dropout_prob)}')
    return link


def _define() -> dict:
    """LinkedTerm (Isaac Lab imported on first use: this module imports without it)."""
    from isaaclab.managers import ManagerTermBase

    class LinkedTerm(ManagerTermBase):
        """One observation function delivered through the env's ObservationLink."""

        def __init__(self, cfg, env):
            """The term's ring (filled at its first read) and the env's link."""
            super().__init__(cfg, env)
            params = cfg.params
            self._link = link_of(env, params['delay_ticks'], params['jitter_prob'],
                                 params['dropout_prob'])
            self._owner = not self._link.owned   # the first term draws at resets
            self._link.owned = True
            self._ring: torch.Tensor | None = None   # (N, depth, D)
            self._held: torch.Tensor | None = None   # (N, D): last delivered
            self._head = 0
            self._tick = -1
            self._fresh = torch.ones(env.num_envs, dtype=torch.bool, device=env.device)

        def reset(self, env_ids=None) -> None:
            """Envs reset: their next read fills the ring with its value (the owner, the
            first linked term, also draws their delay and dropout anew)."""
            every = torch.arange(self.num_envs, device=self.device)
            if env_ids is None or isinstance(env_ids, slice):
                ids = every[env_ids if isinstance(env_ids, slice) else slice(None)]
            else:
                ids = torch.as_tensor(env_ids, dtype=torch.long, device=self.device)
            if self._owner:
                self._link.reset(ids)
            self._fresh[ids] = True

        def __call__(self, env, func, func_params: dict, noise_std: float,
                     delay_ticks, jitter_prob: float, dropout_prob) -> torch.Tensor:
            """func(env, **func_params) plus noise, delivered with this tick's lag or held."""
            value = func(env, **func_params)
            if noise_std > 0.0:
                value = value + noise_std * torch.randn_like(value)
            link, fresh = self._link, self._fresh
            if self._ring is None:
                self._ring = value[:, None, :].repeat(1, link.depth, 1)
                self._held = value.clone()
            tick = int(env.common_step_counter)
            if tick != self._tick:   # a new policy step: push, then read at the lag
                self._tick = tick
                self._head = (self._head + 1) % link.depth
                self._ring[:, self._head] = value
                self._ring[fresh] = value[fresh][:, None, :]
                lag, dropped = link.decide(tick)
                rows = torch.arange(value.shape[0], device=value.device)
                delivered = self._ring[rows, (self._head - lag) % link.depth]
                self._held = torch.where((dropped & ~fresh)[:, None], self._held, delivered)
            elif bool(fresh.any()):   # reset after this step's read: the fresh value
                self._ring[fresh] = value[fresh][:, None, :]
                self._held[fresh] = value[fresh]
            fresh.zero_()
            return self._held.clone()

    LinkedTerm.__module__, LinkedTerm.__qualname__ = __name__, 'LinkedTerm'
    return {'LinkedTerm': LinkedTerm}


def __getattr__(name: str):
    """LinkedTerm, defined on first access."""
    if name == 'LinkedTerm':
        globals().update(_define())
        return globals()[name]
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
