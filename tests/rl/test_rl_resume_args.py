"""What `sim2real train --resume` keeps of the run and what the new command changes."""

from __future__ import annotations

import dataclasses

import pytest

from sim2real.rl.checkpoint import checkpoint_path, save_checkpoint
from sim2real.training import resolve_args, TrainArgs


def stored_run(run_dir, **fields) -> TrainArgs:
    """A run directory whose one checkpoint holds TrainArgs(hand-rotate, **fields)."""
    args = TrainArgs('hand-rotate', **fields)
    save_checkpoint(checkpoint_path(run_dir, 25),
                    {'config': {'args': dataclasses.asdict(args)}})
    return args


def test_resume_keeps_the_runs_threads_unless_new_ones_are_given(tmp_path):
    """A run started on one thread beside another resumes on one by default and on the
    threads asked for when --threads is given (0 is every core); the task's shape stays."""
    stored_run(tmp_path, seed=3, num_threads=1, sets=['ppo.learning_rate=0.0003'])
    kept = resolve_args(TrainArgs('hand-rotate'), tmp_path, resume=True)
    assert (kept.num_threads, kept.seed, kept.sets) == (1, 3, ['ppo.learning_rate=0.0003'])
    for threads in (2, 0):
        moved = resolve_args(TrainArgs('hand-rotate', num_threads=threads), tmp_path, True)
        assert (moved.num_threads, moved.seed) == (threads, 3)


def test_resume_refuses_new_overrides_and_another_task(tmp_path):
    """The overrides and the task of a resumed run are the run's: asking others is an error
    that names them."""
    stored_run(tmp_path, sets=['ppo.learning_rate=0.0003'])
    with pytest.raises(ValueError, match='keeps the overrides'):
        resolve_args(TrainArgs('hand-rotate', sets=['ppo.learning_rate=0.001']), tmp_path, True)
    with pytest.raises(ValueError, match='hand-rotate'):
        resolve_args(TrainArgs('quadrotor-hover'), tmp_path, True)
