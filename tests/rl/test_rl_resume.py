"""Runner resume with env state: episodes continue, wall time sums over segments."""

from __future__ import annotations

import logging

import pytest
import torch

from sim2real.rl.checkpoint import checkpoint_path, load_checkpoint, save_checkpoint
from tests.rl.test_rl_runner import assert_state_equal, make_runner, params, PointMassEnv

# episodes of 40 steps against rollouts of 24: at most boundaries episodes are in flight
EPISODE_STEPS = 40


class StatefulPointMass(PointMassEnv):
    """The point mass with the env state protocol (state_dict, load_state_dict,
    get_observations), random starts and episodes longer than a rollout."""

    _STATE = ('pos_m', 'vel_m_per_s', 'steps', 'episode_return')

    def __init__(self, num_envs: int) -> None:
        """num_envs point masses with random starts."""
        super().__init__(num_envs, episode_length=EPISODE_STEPS)

    def state_dict(self) -> dict:
        """Positions, velocities, step counters, returns and the start generator."""
        state = {name: getattr(self, name).clone() for name in self._STATE}
        return dict(state, generator=self.generator.get_state())

    def load_state_dict(self, state: dict) -> None:
        """Continue from a state_dict()."""
        for name in self._STATE:
            setattr(self, name, state[name].clone())
        self.generator.set_state(state['generator'])

    def get_observations(self) -> dict[str, torch.Tensor]:
        """The observations of the current state."""
        return self._obs()


def split_run(tmp_path, env_class, stop: int, total: int):
    """Train to stop, then resume in a new runner (and env) to total: the resumed runner."""
    make_runner(tmp_path, env_class(16), save_interval=stop).learn(max_iterations=stop)
    resumed = make_runner(tmp_path, env_class(16), save_interval=stop)
    resumed.summary = resumed.learn(max_iterations=total, resume=True)
    return resumed


def test_resume_continues_the_episodes_in_flight(tmp_path):
    """With env state, stop at 3 and resume to 6 equals an uninterrupted 6-iteration run,
    parameters and logged returns; without it (the env reset at the resume, as before env
    state existed) the run ends elsewhere."""
    full = make_runner(tmp_path / 'full', StatefulPointMass(16))
    full.learn(max_iterations=6)
    resumed = split_run(tmp_path / 'split', StatefulPointMass, 3, 6)
    assert_state_equal(params(full), params(resumed))
    assert [e.get('episode/return') for e in full.history] == [
        e.get('episode/return') for e in resumed.history]
    reset = split_run(tmp_path / 'reset', PointMassEnv, 3, 6)   # no env state: reset at 3
    assert any(not torch.equal(a, b) for a, b in zip(
        params(full).values(), params(reset).values()))


def test_second_learn_call_continues_the_episodes(tmp_path):
    """learn(3) then learn(6) on one runner equals learn(6): the env is not reset between."""
    full = make_runner(tmp_path / 'full', StatefulPointMass(16))
    full.learn(max_iterations=6)
    twice = make_runner(tmp_path / 'twice', StatefulPointMass(16))
    twice.learn(max_iterations=3)
    summary = twice.learn(max_iterations=6)
    assert_state_equal(params(full), params(twice))
    assert [(s['start_iteration'], s['end_iteration']) for s in summary['segments']] == [
        (0, 3), (3, 6)]


def test_summary_wall_time_covers_every_segment(tmp_path):
    """A resumed run's wall_s is the sum of its segments (the first as its checkpoint
    recorded it), and steps_per_s is all env steps over that total."""
    resumed = split_run(tmp_path, StatefulPointMass, 3, 6)
    summary = resumed.summary
    first = load_checkpoint(checkpoint_path(tmp_path, 3))['segments']
    assert [(s['start_iteration'], s['end_iteration']) for s in first] == [(0, 3)]
    segments = summary['segments']
    assert segments[0] == first[0]
    assert [(s['start_iteration'], s['end_iteration']) for s in segments] == [(0, 3), (3, 6)]
    assert summary['wall_s'] == pytest.approx(segments[0]['wall_s'] + segments[1]['wall_s'])
    assert summary['steps_per_s'] == pytest.approx(6 * 16 * 24 / summary['wall_s'])
    assert summary['env_steps'] == 6 * 16 * 24


def test_checkpoint_without_env_state_resumes_with_a_warning(tmp_path, caplog):
    """A checkpoint of format /1 (no env state, no segments) still resumes, to the total,
    with a warning that the continuation is not exact; the summary counts what it saw."""
    make_runner(tmp_path, StatefulPointMass(16), save_interval=3).learn(max_iterations=3)
    path = checkpoint_path(tmp_path, 3)
    state = load_checkpoint(path)
    del state['env_state'], state['segments']
    save_checkpoint(path, dict(state, format='sim2real.rl.checkpoint/1'))
    runner = make_runner(tmp_path, StatefulPointMass(16), save_interval=3)
    with caplog.at_level(logging.WARNING, logger='sim2real.rl.runner'):
        summary = runner.learn(max_iterations=6, resume=True)
    assert summary['iterations'] == 6
    assert [(s['start_iteration'], s['end_iteration']) for s in summary['segments']] == [(3, 6)]
    warning = ' '.join(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    assert 'holds no env state' in warning and 'sim2real.rl.checkpoint/1' in warning
    assert 'not end exactly' in warning


def test_lean_checkpoint_restores_the_learner_exactly(tmp_path, caplog):
    """A current checkpoint stripped of env_state (checkpoints/README.md, how a run crosses
    sessions): the networks, log-std, normalizer and counters load bit for bit, the warning
    names the case, and training continues to the total."""
    run = make_runner(tmp_path, StatefulPointMass(16), save_interval=3)
    run.learn(max_iterations=3)
    path = checkpoint_path(tmp_path, 3)
    state = load_checkpoint(path)
    del state['env_state']
    save_checkpoint(path, state)
    runner = make_runner(tmp_path, StatefulPointMass(16), save_interval=3)
    runner.load(path)
    assert_state_equal(params(runner), params(run))
    assert (runner.iteration, runner.env_steps) == (3, run.env_steps)
    runner = make_runner(tmp_path, StatefulPointMass(16), save_interval=3)
    with caplog.at_level(logging.WARNING, logger='sim2real.rl.runner'):
        assert runner.learn(max_iterations=5, resume=True)['iterations'] == 5
    warning = ' '.join(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    assert 'holds no env state (saved without it' in warning


class HalfStatefulPointMass(StatefulPointMass):
    """A point mass one of whose (user-written) components cannot give its state."""

    def state_dict(self) -> dict:
        """Refuse, as a component without the state protocol makes RLEnv.state_dict do."""
        from sim2real.sim.state import StateError
        raise StateError("RLEnv.commands['target'] (MyTarget) has no state_dict()")


def test_an_env_that_cannot_give_its_state_still_trains_and_checkpoints(tmp_path, caplog):
    """A component without the state protocol: training does not stop at the first save
    (it did); checkpoints are written without env state, with one warning saying why."""
    runner = make_runner(tmp_path, HalfStatefulPointMass(16), save_interval=1)
    with caplog.at_level(logging.WARNING, logger='sim2real.rl.runner'):
        summary = runner.learn(max_iterations=3)
    assert summary['iterations'] == 3
    state = load_checkpoint(checkpoint_path(tmp_path, 3))
    assert 'env_state' not in state and state['iteration'] == 3
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and 'MyTarget) has no state_dict()' in warnings[0]


def test_tensorboard_keeps_every_iteration_across_a_resume(tmp_path):
    """Stop at 3, resume to 6: TensorBoard holds steps 1..6 once each (purging from the
    checkpoint's own step lost it)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    split_run(tmp_path, StatefulPointMass, 3, 6)
    events = EventAccumulator(str(tmp_path / 'tb'))
    events.Reload()
    assert [e.step for e in events.Scalars('train/approx_kl')] == [1, 2, 3, 4, 5, 6]
