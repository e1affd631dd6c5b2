"""RLEnv.state_dict / load_state_dict: a restored env continues bit-identically."""

import pytest
import torch

from sim2real.mdp.env import RLEnv
from sim2real.mdp.ranges import bias_edges
from sim2real.sim.state import StateError
from sim2real.tasks import make_env_cfg, task_names

STEPS_BEFORE, STEPS_AFTER = 35, 40


def counted(func):
    """func, counting in .calls the envs it was applied to."""
    def wrapper(env, env_ids, **params):
        wrapper.calls += len(env_ids)
        return func(env, env_ids, **params)
    wrapper.calls = 0
    return wrapper


def build(task: str, seed: int = 0, num_envs: int = 8, backend: str = 'mujoco',
          corner_prob: float = 0.0) -> RLEnv:
    """A tiny env whose interval events (counted) fire every 3-10 policy steps and whose
    episodes end (time-outs, crashes) within the steps compared; corner_prob > 0: training's
    edge-biased box with that share of corner envs."""
    cfg = make_env_cfg(task)
    if corner_prob > 0.0:
        bias_edges(cfg, 0.3, per_env=True)
        cfg.corner_prob = corner_prob
    cfg.num_envs, cfg.num_threads, cfg.seed, cfg.backend = num_envs, 1, seed, backend
    for term in cfg.events.values():
        if term.mode == 'interval':
            term.interval_s = (0.05, 0.1)
            term.func = counted(term.func)
    cfg.episode_length_s = 0.46   # quadruped 23, hover 46 steps: no reset at the save
    return RLEnv(cfg)


def interval_events(env: RLEnv) -> int:
    """How many env-events the interval terms have applied so far."""
    return sum(t.func.calls for t in env.cfg.events.values() if t.mode == 'interval')


def rollout(env: RLEnv, steps: int, seed: int) -> tuple[list, int]:
    """(obs, rewards, terminated, truncated, log) per step under seeded random actions, and
    the number of interval events applied meanwhile."""
    actions = torch.Generator().manual_seed(seed)
    out, fired = [], interval_events(env)
    for _ in range(steps):
        obs, rewards, terminated, truncated, extras = env.step(
            torch.rand(env.num_envs, env.num_actions, generator=actions) * 2 - 1)
        out.append(({k: v.clone() for k, v in obs.items()}, rewards.clone(),
                    terminated.clone(), truncated.clone(), extras['log']))
    return out, interval_events(env) - fired


def bits(t: torch.Tensor) -> torch.Tensor:
    """The tensor's bytes, so that NaN equals NaN."""
    return t.reshape(-1).view(torch.uint8) if t.dtype != torch.bool else t


def assert_same_state(a, b, where='state'):
    """Nested states hold the same values bit for bit (NaN equal to NaN)."""
    if isinstance(a, torch.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape, where
        assert torch.equal(bits(a), bits(b)), where
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for key in a:
            assert_same_state(a[key], b[key], f'{where}[{key!r}]')
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same_state(x, y, f'{where}[{i}]')
    else:
        assert a == b, where


def check_round_trip(task: str, backend: str = 'mujoco', corner_prob: float = 0.0) -> None:
    """Step, save, step on; restore into an env built with another seed, step on: equal."""
    env = build(task, backend=backend, corner_prob=corner_prob)
    rollout(env, STEPS_BEFORE, seed=1)
    state = env.state_dict()
    expected, fired = rollout(env, STEPS_AFTER, seed=2)
    restored = build(task, seed=5, backend=backend, corner_prob=corner_prob)
    mass = 'body_mass'
    assert not torch.equal(restored.scene.backend.expand(mass), env.scene.backend.expand(mass))
    restored.load_state_dict(state)
    assert_same_state(restored.get_observations(), state['_obs'])
    got, fired_again = rollout(restored, STEPS_AFTER, seed=2)
    dones = sum(int((step[2] | step[3]).sum()) for step in expected)
    assert fired > 0 and dones > 0, (fired, dones)   # events and resets inside the window
    assert fired_again == fired
    for i, (a, b) in enumerate(zip(expected, got)):
        assert_same_state(a, b, f'step {i}')
    assert_same_state(env.state_dict(), restored.state_dict())


@pytest.mark.parametrize('task', ['quadrotor-hover', 'quadruped-flat'])
def test_restored_env_continues_bit_identically(task):
    """After a restore into an env of another seed, 40 steps with resets, randomized model
    fields and interval events give the same observations, rewards, dones, episode logs and
    final state as the original env's."""
    check_round_trip(task)


def test_restored_env_with_corner_draws_continues_bit_identically():
    """The same with training's edge bias and half the resets drawing a corner of the box
    (the corner flags are not state: a restored env draws as the original)."""
    check_round_trip('quadruped-flat', corner_prob=0.5)


@pytest.mark.slow
def test_restored_mjwarp_env_continues_bit_identically():
    """The same on the mjwarp backend (Warp's CPU device; ~40 s kernel compile on first use,
    cached after)."""
    pytest.importorskip('mujoco_warp')
    check_round_trip('quadrotor-hover', backend='mjwarp')


@pytest.mark.parametrize('task', task_names())
def test_every_task_has_a_complete_state(task):
    """Every registered task's env says what its state is (no undeclared buffer, no
    component without the protocol) and loads its own state back."""
    env = build(task, num_envs=2)
    env.step(torch.zeros(2, env.num_actions))
    state = env.state_dict()
    env.load_state_dict(state)
    assert_same_state(env.state_dict(), state)


def test_state_errors_name_the_component():
    """An undeclared buffer, a component without state_dict, a missing entry and another
    batch size are refused with StateError naming what is at fault."""
    env = build('quadrotor-hover', num_envs=2)
    env.scene.actuator.brush_temperature = torch.zeros(2)
    with pytest.raises(StateError, match=r'QuadrotorActuator\.brush_temperature'):
        env.state_dict()
    del env.scene.actuator.brush_temperature

    class Beacon:
        """A command term without the state protocol."""

        def __init__(self):
            self.pos_w = torch.zeros(2, 3)

    target = env.commands['target']
    env.commands['target'] = Beacon()
    with pytest.raises(StateError, match=r"RLEnv\.commands\['target'\] \(Beacon\)"):
        env.state_dict()
    env.commands['target'] = target
    state = env.state_dict()
    del state['scene']['actuator']['command']
    with pytest.raises(StateError, match=r"QuadrotorActuator: the state lacks \['command'\]"):
        env.load_state_dict(state)
    with pytest.raises(StateError, match='number of envs 2, this env 3'):
        build('quadrotor-hover', num_envs=3).load_state_dict(env.state_dict())
