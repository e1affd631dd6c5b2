"""The Isaac Lab stage of the test command (`make isaaclab-stage`, marker `isaaclab`): with
the Isaac Lab 3.0 venv that the Makefile builds from requirements-isaaclab.txt
(SIM2REAL_ISAACLAB_PYTHON), our quadruped-flat task is built in Isaac Lab and stepped, trained
for 2 rsl_rl iterations by `sim2real train --backend isaaclab`, exported with our contract,
loaded by our deploy runtime, and the run imported again by `sim2real import-isaaclab`."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from sim2real.interop.isaaclab_task import PYTHON_ENV_VAR
from tests.interop.fixture_run import feed_standing

pytestmark = pytest.mark.isaaclab

ROOT = Path(__file__).resolve().parents[2]
TASK = 'quadruped-flat'


def _run(command: list[str], timeout_s: float) -> subprocess.CompletedProcess:
    """A command with WARP_CACHE_PATH kept between runs; its output in the failure text."""
    env = dict(os.environ)
    env.setdefault('WARP_CACHE_PATH', str(Path.home() / '.cache' / 'warp'))
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s,
                          env=env, cwd=ROOT)
    assert done.returncode == 0, f'{command}\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}'
    return done


@pytest.fixture(scope='module')
def isaaclab_python():
    """The Isaac Lab venv's Python: the stage must have it (no skip)."""
    python = os.environ.get(PYTHON_ENV_VAR)
    assert python and Path(python).is_file(), (
        f'{PYTHON_ENV_VAR} must name the Isaac Lab venv (make isaaclab-stage builds it)')
    return python


@pytest.fixture(scope='module')
def ours():
    """Our task's contract."""
    from sim2real.mdp.contract import contract_from_env
    from sim2real.training import build_env
    return contract_from_env(build_env(TASK, seed=0, num_envs=1, num_threads=1))


@pytest.fixture(scope='module')
def run(isaaclab_python, tmp_path_factory):
    """`sim2real train quadruped-flat --backend isaaclab`: 16 envs, 2 iterations."""
    run_dir = tmp_path_factory.mktemp('isaaclab') / 'run'
    done = _run([sys.executable, '-m', 'sim2real.cli.main', 'train', TASK, '--backend',
                 'isaaclab', '--run-dir', str(run_dir), '--num-envs', '16',
                 '--max-iterations', '2', '--seed', '0', '--json'], timeout_s=1200)
    printed = json.loads(done.stdout.strip().splitlines()[-1])
    return run_dir, Path(printed['onnx']), done


def test_our_task_builds_and_stands_in_isaac_lab(isaaclab_python, run, ours):
    """The Isaac Lab env of the task file: our joints in URDF order, 105 policy inputs as the
    contract says, our terms by name, our only-positive reward clip, our 0-1 tick action
    delay, observation delay, jitter and dropout, encoder offsets, IMU tilt and motor
    strength drawn per env; 50 zero-action steps keep every observation finite and the trunk
    within 3 cm of the height our MuJoCo env settles at (median over envs)."""
    from sim2real.training import build_env
    run_dir, _, _ = run
    done = _run([isaaclab_python, '-P', '-m', 'sim2real.isaaclab.check', str(run_dir),
                 '--num-envs', '16', '--steps', '50'], timeout_s=900)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report['joint_names'] == ours.joint_names
    assert report['policy_obs_dim'] == ours.observation_size == 105
    assert report['policy_terms'] == [t.name for t in ours.observations]
    assert report['action_dim'] == 12 and report['step_dt_s'] == pytest.approx(0.02)
    assert {'track_lin_vel_xy', 'termination', 'base_height'} <= set(report['reward_terms'])
    # our only-positive clip: no step that did not end in a fall is rewarded below zero
    assert report['reward_manager'] == 'PositiveRewardManager'
    assert report['lowest_reward_without_fall'] >= 0.0
    assert report['finite']
    # our 0-1 tick action delay, as whole ticks of 4 physics steps, drawn per env
    assert report['action_delay_steps'] == [0, 4]
    # our observation link: 0-1 tick of delay and a dropout probability of 0-0.3 per env;
    # the first term's newest value repeats at the held ticks (mean dropout 0.15) and, of
    # the others, where jitter makes a tick one later than the one before (0.7 x 0.3 = 0.21):
    # about 0.15 + 0.85 x 0.21 = 0.33, and nowhere else: its noise never repeats (a repeat
    # share of 0 without the link)
    assert report['observation_delay_ticks'] == [0, 1]
    low, high = report['observation_dropout_prob']
    assert 0.0 <= low < high <= 0.3
    assert 0.15 < report['repeated_share'] < 0.5, report['repeated_share']
    # our sensor and motor randomization, at each reset (16 envs x 12 joints of draws)
    events = {name: term.params for name, term in build_env(
        TASK, seed=0, num_envs=1, num_threads=1).cfg.events.items()}
    bias_rad = events['encoder_bias']['bias_rad']
    assert 0.5 * bias_rad < report['encoder_bias_max_rad'] <= bias_rad
    tilt_rad = events['imu_mount']['max_tilt_rad']
    assert 0.5 * tilt_rad < report['imu_tilt_max_rad'] <= tilt_rad + 1e-4
    low, high = events['motor_strength']['strength_range']
    assert low <= report['motor_strength'][0] < report['motor_strength'][1] <= high
    env = build_env(TASK, seed=0, num_envs=64, num_threads=1)
    env.reset()
    for _ in range(50):
        env.step(torch.zeros(64, 12))
    mujoco_m = float(env.scene.base_height_m().median())
    assert abs(report['base_height_m'] - mujoco_m) < 0.03, (report['base_height_m'], mujoco_m)


def test_two_iterations_train_and_export_with_our_contract(run, ours):
    """The run holds what Isaac Lab's train script writes (env and agent configs, a
    checkpoint per iteration, TensorBoard events) and the joint order; policy.onnx carries
    our task's observation contract and computes the run's actor."""
    from sim2real.contract import Contract
    from sim2real.onnx_io import read_contract
    run_dir, onnx, _ = run
    for name in ('params/env.yaml', 'params/agent.yaml', 'params/joint_names.yaml',
                 'model_1.pt', 'isaaclab_task.yaml'):
        assert (run_dir / name).is_file(), name
    assert list(run_dir.glob('events.out.tfevents.*'))
    assert torch.load(run_dir / 'model_1.pt', weights_only=False)['iter'] == 1
    contract = read_contract(onnx)
    assert isinstance(contract, Contract)
    assert [(t.name, t.size, t.history_length) for t in contract.observations] == [
        (t.name, t.size, t.history_length) for t in ours.observations]
    assert contract.robot_params['imported_from'] == 'isaaclab'


def test_our_runtime_runs_the_file(run):
    """config/quadruped.yaml loads it; at the default pose it builds the 105 inputs (the base
    velocity from the leg odometry) and the policy gives 12 finite actions."""
    from sim2real.deploy.runtime import Runtime
    _, onnx, _ = run
    runtime = Runtime.from_files(onnx, ROOT / 'config' / 'quadruped.yaml')
    obs = runtime.observation(feed_standing(runtime))
    assert obs.shape == (1, 105) and np.isfinite(obs).all()
    action, _ = runtime.policy.run(obs)
    assert np.asarray(action).shape[-1] == 12 and np.isfinite(action).all()


def test_the_run_imports_through_the_command(run, tmp_path):
    """`sim2real import-isaaclab RUN --task quadruped-flat --out F` on the stage's run."""
    run_dir, _, _ = run
    out = tmp_path / 'again.onnx'
    done = _run([sys.executable, '-m', 'sim2real.cli.main', 'import-isaaclab', str(run_dir),
                 '--task', TASK, '--out', str(out), '--json'], timeout_s=300)
    printed = json.loads(done.stdout.strip().splitlines()[-1])
    assert printed['onnx'] == str(out) and out.is_file()


def test_the_shipped_policy_walks_in_isaac_lab(isaaclab_python):
    """`sim2real eval policies/quadruped_flat.onnx --backend isaaclab --episodes 8`: our
    MuJoCo-trained policy in the Isaac Lab env, 8 envs of one 20 s episode each, ends with a
    verdict whose exit status agrees; it tracks the commands (a standing or falling robot
    errs by 0.5 m/s and more; the shipped policy errs by 0.080 in our env)."""
    command = [sys.executable, '-m', 'sim2real.cli.main', 'eval',
               str(ROOT / 'policies' / 'quadruped_flat.onnx'), '--backend', 'isaaclab',
               '--episodes', '8', '--json']
    env = dict(os.environ)
    env.setdefault('WARP_CACHE_PATH', str(Path.home() / '.cache' / 'warp'))
    done = subprocess.run(command, capture_output=True, text=True, timeout=1200, env=env,
                          cwd=ROOT)
    assert done.returncode in (0, 1), done.stderr[-5000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result['engine'] == 'isaaclab' and result['episodes'] == 8
    assert done.returncode == (0 if result['verdict']['passed'] else 1)
    assert 'verdict eval quadruped-flat in Isaac Lab' in done.stderr
    assert result['lin_vel_error_mps'] < 0.2 and result['fall_rate'] <= 0.25, result
