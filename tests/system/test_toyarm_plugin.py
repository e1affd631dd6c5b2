"""A robot added as a folder, with no edit to sim2real: the toy arm plug-in end to end.

The test installs tests/plugins/toyarm (a fixed-base two-joint planar arm: training task,
deploy folder, simulated twin, HIL profile) into a temporary folder, writes its URDF and its
parameter file, and names it in SIM2REAL_PLUGINS. Then, each in a fresh process as a user
would run them: `sim2real tasks` lists it, 2 PPO iterations train it, `sim2real export`
verifies the ONNX file against torch, and `sim2real hil toyarm` runs the generic joint chain
in the real policy node against the arm's twin in the real bridge over DDS: a nominal run
and joint-stream faults, each with its verdict.
"""

import json
import math
import os
from pathlib import Path
import shutil
import subprocess
import sys

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / 'tests' / 'plugins' / 'toyarm'

URDF = """<?xml version="1.0"?>
<robot name="toyarm">
  <link name="base_link"><inertial><mass value="1.0"/><origin xyz="0 0 0"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="upper"><inertial><mass value="0.5"/><origin xyz="0.15 0 0"/>
    <inertia ixx="0.0005" iyy="0.004" izz="0.004" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="fore"><inertial><mass value="0.3"/><origin xyz="0.125 0 0"/>
    <inertia ixx="0.0003" iyy="0.002" izz="0.002" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="tip"/>
  <joint name="shoulder" type="revolute"><parent link="base_link"/><child link="upper"/>
    <origin xyz="0 0 0.1"/><axis xyz="0 0 1"/><dynamics damping="0.02"/>
    <limit lower="-2.6" upper="2.6" effort="8" velocity="6"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="fore"/>
    <origin xyz="0.3 0 0"/><axis xyz="0 0 1"/><dynamics damping="0.02"/>
    <limit lower="-2.6" upper="2.6" effort="4" velocity="8"/></joint>
  <joint name="tip_joint" type="fixed"><parent link="fore"/><child link="tip"/>
    <origin xyz="0.25 0 0"/></joint>
</robot>
"""
"""A planar arm: 0.3 m and 0.25 m links about vertical axes, 1.8 kg in all."""


def _params(urdf: Path) -> dict:
    """Both nodes' parameters, as config/<robot>.yaml would hold them."""
    node = {
        'robot': 'toyarm', 'urdf_file': str(urdf), 'rate_hz': 50.0,
        'joint_names': ['elbow', 'shoulder'],   # any order: matched by name
        'kp': [5.0, 5.0], 'kd': [0.5, 0.5], 'torque_limit_nm': [4.0, 8.0],
        'pos_min_rad': [-2.5, -2.5], 'pos_max_rad': [2.5, 2.5], 'max_rate_rad_s': [2.0, 2.0],
        'joint_vel_limit_rad_s': 10.0, 'joint_state_timeout_s': 0.05, 'soft_start_s': 0.5,
        'command_topic': 'joint_commands', 'diagnostics_period_s': 0.5}
    bridge = {'robot': 'toyarm', 'urdf_file': str(urdf), 'physics_rate_hz': 200.0,
              'command_timeout_s': 0.1}
    return {'policy_node': {'ros__parameters': node},
            'sim_bridge': {'ros__parameters': bridge}}


@pytest.fixture(scope='module')
def plugin(tmp_path_factory):
    """The plug-in folder installed on a PYTHONPATH entry, its URDF and parameter file."""
    root = tmp_path_factory.mktemp('plugins')
    shutil.copytree(TEMPLATE, root / 'toyarm',
                    ignore=shutil.ignore_patterns('__pycache__'))
    urdf = root / 'toyarm' / 'toyarm.urdf'
    urdf.write_text(URDF)
    params = root / 'toyarm.yaml'
    params.write_text(yaml.safe_dump(_params(urdf)))
    env = dict(os.environ, SIM2REAL_PLUGINS='toyarm', PYTHONPATH=os.pathsep.join(
        [str(root), str(ROOT), os.environ.get('PYTHONPATH', '')]).rstrip(os.pathsep))
    return {'root': root, 'params': params, 'env': env}


def _cli(plugin, *args, timeout_s=240) -> subprocess.CompletedProcess:
    """`sim2real ARGS` in a fresh process that finds the plug-in."""
    return subprocess.run([sys.executable, '-m', 'sim2real.cli.main', *args],
                          capture_output=True, text=True, timeout=timeout_s, cwd=ROOT,
                          env=plugin['env'])


@pytest.mark.slow
def test_a_plugin_robot_trains_exports_and_passes_hil(plugin, tmp_path):
    """tasks lists toyarm-reach; 2 iterations train; export verifies; hil passes a nominal
    run (active throughout, tip below 1 m/s, no limit violation) and latches on NaN joint
    states within 2 ticks; the bridge's watchdog catches lost commands."""
    listed = _cli(plugin, 'tasks')
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert 'toyarm-reach' in listed.stdout and 'quadruped-flat' in listed.stdout

    run = tmp_path / 'run'
    trained = _cli(plugin, 'train', 'toyarm-reach', '--run-dir', str(run), '--num-envs', '64',
                   '--max-iterations', '2', '--no-progress', '--json')
    assert trained.returncode == 0, trained.stderr[-3000:]
    summary = json.loads(trained.stdout.strip().splitlines()[-1])
    assert summary['iterations'] == 2

    exported = _cli(plugin, 'export', str(run), '--band-samples', '512', '--json')
    assert exported.returncode == 0, exported.stderr[-3000:]
    check = json.loads(exported.stdout.strip().splitlines()[-1])
    assert check['max_abs_diff'] < 1e-4
    from sim2real.onnx_io import read_contract
    contract = read_contract(check['onnx'])
    assert contract.robot == 'toyarm' and contract.joint_names == ['shoulder', 'elbow']
    assert [t.name for t in contract.observations] == [
        'joint_pos_rel', 'joint_vel', 'target_pos_b', 'action_history']

    hil = _cli(plugin, 'hil', 'toyarm', '--policy', check['onnx'], '--params',
               str(plugin['params']), '--duration', '2', '--faults',
               'nan_joint_states,command_loss', '--log-dir', str(tmp_path / 'logs'), '--json',
               timeout_s=180)
    assert hil.returncode == 0, hil.stdout[-2000:] + hil.stderr[-3000:]
    result = json.loads(hil.stdout.strip().splitlines()[-1])
    assert result['verdict']['passed'], result['verdict']['lines']
    assert result['nominal_states'] == ['active']
    assert result['limit_violations'] == 0
    assert 45.0 < result['achieved_rate_hz'] < 55.0
    assert 0.0 < result['tip_speed_max_m_s'] < 1.0
    assert math.isfinite(result['reach_error_m'])   # reported, not judged (2 iterations)
    nan = result['faults']['nan_joint_states']
    assert nan['recovered_safe'] and 0 <= nan['ticks_to_safe'] <= 2 and nan['fallback']
    loss = result['faults']['command_loss']
    assert loss['recovered_safe'] and 0 <= loss['ticks_to_safe'] <= 2
    assert 'pass nominal' in hil.stderr and 'pass nan_joint_states (latch)' in hil.stderr
