"""bench.quadruped_train reads the acceptance level off a run's TensorBoard log."""

import pytest

from bench.quadruped_train import time_to_level


def _write_run(run_dir, fall, error):
    """A TensorBoard log as the runner writes it: one value per iteration and key."""
    from torch.utils.tensorboard import SummaryWriter
    writer = SummaryWriter(str(run_dir / 'tb'))
    for it, (f, e) in enumerate(zip(fall, error), start=1):
        writer.add_scalar('env_steps', 1000 * it, it)
        writer.add_scalar('episode/fall_rate', f, it)
        writer.add_scalar('episode/lin_vel_error_mps', e, it)
    writer.close()


def test_first_window_at_the_level_is_reported(tmp_path):
    """Falls reach 0 at iteration 6, errors 0.08 from 9: the 3-window first holds at 11."""
    fall = [0.5] * 5 + [0.0] * 10
    error = [0.3] * 8 + [0.08] * 7
    _write_run(tmp_path, fall, error)
    out = time_to_level(tmp_path, window=3)
    assert out['reached'] and out['iteration'] == 11
    assert out['env_steps_to_level'] == 11_000 and out['env_steps'] == 15_000
    assert out['final_lin_vel_error_mps'] == pytest.approx(0.08)


def test_a_run_that_never_gets_there_says_so(tmp_path):
    """2 % is the bar: 3 % falls throughout is not at the level."""
    _write_run(tmp_path, [0.03] * 12, [0.05] * 12)
    out = time_to_level(tmp_path, window=3)
    assert not out['reached'] and 'iteration' not in out
    assert out['final_fall_rate'] == pytest.approx(0.03)
