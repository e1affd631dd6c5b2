"""Typed configuration of environments: one dataclass per kind of term and per manager."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass
class ObsTermCfg:
    """One observation term: func(env, **params) -> (N, size) tensor."""

    func: Callable
    """Pure term function."""
    params: dict[str, Any] = field(default_factory=dict)
    """Keyword arguments of func."""
    scale: float = 1.0
    """Multiplier applied before clipping."""
    clip: float | None = None
    """Symmetric clip after scaling, or None."""
    noise_std: float = 0.0
    """Additive Gaussian noise after scaling (training and evaluation, not play)."""
    delayed: bool = True
    """Whether the group's observation delay and dropout apply; False for what the deploy
    runtime computes itself at the tick (the action history), not a sensor's reading."""
    history_length: int = 1
    """Ticks of the term in the vector, newest first: its delivered values (scaled, noisy,
    clipped, delayed) of this and the previous history_length - 1 ticks
    (sim2real/mdp/history.py)."""


@dataclass
class ObsGroupCfg:
    """An ordered group of observation terms concatenated into one vector."""

    terms: dict[str, ObsTermCfg]
    """Terms in order."""
    delay_ticks: tuple[int, int] = (0, 0)
    """Per-env observation delay in control ticks, sampled at reset from this range."""
    jitter_prob: float = 0.0
    """Probability that a tick's observation is one tick older than the env's delay (a
    message late by part of a period), within max_delay_ticks."""
    dropout_prob: tuple[float, float] = (0.0, 0.0)
    """Range of the per-env probability, drawn at reset, that a tick delivers the previous
    tick's delayed terms again (a lost message: the runtime holds the last sample)."""
    add_noise: bool = True
    """Whether the terms' noise is applied."""

    @property
    def max_delay_ticks(self) -> int:
        """Oldest observation a tick can deliver, in ticks (delay plus jitter)."""
        from sim2real.mdp.ranges import bounds
        high = int(round(bounds(self.delay_ticks)[1]))
        return high + (1 if self.jitter_prob > 0.0 else 0)


@dataclass
class RewardTermCfg:
    """One reward term: weight * dt * func(env, **params)."""

    func: Callable
    """Pure term function returning (N,)."""
    weight: float
    """Weight; penalties are positive magnitudes with negative weights."""
    params: dict[str, Any] = field(default_factory=dict)
    """Keyword arguments of func."""
    after_clip: bool = False
    """Added after EnvCfg.only_positive_rewards clips the other terms' total at zero (as
    legged_gym adds its termination reward), so a penalty such as a fall's still counts."""


@dataclass
class TerminationTermCfg:
    """One termination term: func(env, **params) -> (N,) bool."""

    func: Callable
    """Pure term function."""
    params: dict[str, Any] = field(default_factory=dict)
    """Keyword arguments of func."""
    time_out: bool = False
    """True when the term truncates (the value function bootstraps) rather than terminates."""


@dataclass
class EventTermCfg:
    """A randomization or reset event: func(env, env_ids, **params)."""

    func: Callable
    """Event function."""
    mode: str
    """'startup' (once), 'reset' (each reset) or 'interval' (every interval_s per env)."""
    params: dict[str, Any] = field(default_factory=dict)
    """Keyword arguments of func (ranges, operations)."""
    interval_s: tuple[float, float] = (1.0, 1.0)
    """Range the time to the next interval event is drawn from [s]."""


@dataclass
class TermClassCfg:
    """A stateful term (command generator, action term) built as class_type(env, cfg)."""

    class_type: Callable
    """Class constructed with (env, **params)."""
    params: dict[str, Any] = field(default_factory=dict)
    """Keyword arguments of the constructor."""


@dataclass
class RandomParamCfg:
    """One dimension of the randomization box: a scalar range drawn per env.

    ``sim2real robustness`` pins it at its nominal value, its edges, 1.25x past them and at
    every corner of the box. Stochastic processes (noise, wind, pushes, per-rotor or
    per-joint spreads around the drawn value) stay as in training at every point.
    """

    path: str
    """Where the range lives in the EnvCfg (see sim2real.mdp.ranges), e.g.
    'events.mass.value_range'."""
    nominal: float
    """The robot's nominal value in the range's units (the URDF's, or 0 delay)."""
    unit: str
    """Units of the range, e.g. 'x nominal', 'kg', 'ticks (10 ms)'."""
    integer: bool = False
    """Whole numbers only (delays in ticks)."""
    source: str = ''
    """Where the nominal value and the range come from."""


@dataclass
class EnvCfg:
    """A batched RL environment."""

    task: str
    """Registered task name."""
    robot: str
    """URDF name under urdf/."""
    scene: TermClassCfg
    """Builds the simulation backend, actuators and robot state view."""
    action: TermClassCfg
    """The action term."""
    observations: dict[str, ObsGroupCfg]
    """Observation groups; 'policy' feeds the actor, 'critic' the value function."""
    rewards: dict[str, RewardTermCfg]
    """Reward terms."""
    terminations: dict[str, TerminationTermCfg]
    """Termination terms."""
    events: dict[str, EventTermCfg] = field(default_factory=dict)
    """Randomization and reset events."""
    commands: dict[str, TermClassCfg] = field(default_factory=dict)
    """Command generators."""
    metrics: TermClassCfg | None = None
    """Task metrics (success, errors) accumulated over episodes."""
    randomization: dict[str, RandomParamCfg] = field(default_factory=dict)
    """The randomization box: the scalar parameters each episode draws (names with units)."""
    corner_prob: float = 0.0
    """Probability that an env draws the whole randomization box at its corners: every box
    parameter at one of its bounds (reset draws per episode, startup draws for the run;
    training only, with the ranges bias_edges wrapped; evaluation keeps 0)."""
    num_envs: int = 4096
    """Number of parallel environments."""
    num_threads: int = 0
    """Simulation threads (0: all CPUs)."""
    backend: str = 'mujoco'
    """Simulation backend: 'mujoco' (mujoco.batch, CPU) or 'mjwarp' (MuJoCo Warp)."""
    device: str = 'cpu'
    """Device of the simulation: 'cpu', or 'cuda' with the mjwarp backend."""
    physics_dt_s: float = 0.002
    """Physics timestep [s]."""
    decimation: int = 5
    """Physics steps per policy step."""
    episode_length_s: float = 5.0
    """Episode duration before a time-out [s]."""
    only_positive_rewards: bool = False
    """Clip each step's total reward at zero (legged_gym's only_positive_rewards): while a
    new policy only collects penalties, ending the episode early would otherwise pay."""
    seed: int = 0
    """Seed of every random draw in the environment."""

    @property
    def step_dt_s(self) -> float:
        """Policy period [s]."""
        return self.physics_dt_s * self.decimation
