"""Shared deploy fixtures: tiny ONNX policies with real contracts, parameter files, a test URDF.

Everything is built once per session: the quadrotor contract comes from a 2-env
'quadrotor-hover' env (contract_from_env), the joint contract is written here for a 3-joint
URDF generated below.
"""

import json

import onnx
import pytest
import torch
import yaml

from sim2real.contract import (
    ActionSpec, CONTRACT_KEY, Contract, file_sha256, ObservationTermSpec)
from sim2real.contract_digest import bind_contract_json
from sim2real.deploy.robots import register_robot
from sim2real.export.onnx_policy import export_onnx

# 'testarm', the 3-joint robot of these tests, runs the quadruped's composition of the joint
# chain (base IMU, velocity command, leg odometry when the contract names feet)
register_robot('testarm', 'sim2real.deploy.robots.quadruped')

JOINT_URDF = """<?xml version="1.0"?>
<robot name="testarm">
  <link name="base"><inertial><mass value="1.0"/><origin xyz="0 0 0"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="l0"><inertial><mass value="0.5"/><origin xyz="0 0 0.1"/>
    <inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="l1"><inertial><mass value="0.25"/><origin xyz="0 0 0.1"/>
    <inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="l2"><inertial><mass value="0.25"/><origin xyz="0 0 0.1"/>
    <inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="hip" type="revolute"><parent link="base"/><child link="l0"/>
    <origin xyz="0 0 0.1"/><axis xyz="0 1 0"/>
    <limit lower="-2.0" upper="2.0" effort="30" velocity="20"/></joint>
  <joint name="knee" type="revolute"><parent link="l0"/><child link="l1"/>
    <origin xyz="0 0 0.2"/><axis xyz="0 1 0"/>
    <limit lower="-2.5" upper="0.5" effort="30" velocity="20"/></joint>
  <joint name="ankle" type="revolute"><parent link="l1"/><child link="l2"/>
    <origin xyz="0 0 0.2"/><axis xyz="1 0 0"/>
    <limit lower="-1.0" upper="1.0" effort="10" velocity="20"/></joint>
</robot>
"""
JOINT_NAMES = ['hip', 'knee', 'ankle']


def tiny_policy(obs_size: int, action_size: int, seed: int = 0) -> torch.nn.Module:
    """A 16-unit MLP with seeded weights."""
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(obs_size, 16), torch.nn.Tanh(),
                               torch.nn.Linear(16, action_size))


def write_with_contract(src, dst, contract_json: str, bind: bool = True):
    """Copy ONNX file src to dst with its contract replaced by contract_json, bound to the
    graph by a fresh digest (as an exporter that wrote that contract would) unless not bind
    (an edit after export)."""
    model = onnx.load(str(src))
    if bind:
        bind_contract_json(model, contract_json)
    else:
        for prop in model.metadata_props:
            if prop.key == CONTRACT_KEY:
                prop.value = contract_json
    onnx.save(model, str(dst))
    return dst


@pytest.fixture(scope='session')
def deploy_dir(tmp_path_factory):
    """Session folder for generated policies, URDFs and parameter files."""
    return tmp_path_factory.mktemp('deploy')


@pytest.fixture(scope='session')
def quad_contract():
    """The contract of 'quadrotor-hover' (play mode) from a real 2-env env."""
    from sim2real.mdp.contract import contract_from_env
    from sim2real.mdp.env import RLEnv
    from sim2real.tasks import make_env_cfg
    cfg = make_env_cfg('quadrotor-hover', play=True)
    cfg.num_envs, cfg.num_threads = 2, 1
    return contract_from_env(RLEnv(cfg))


@pytest.fixture(scope='session')
def quad_policy(deploy_dir, quad_contract):
    """Path of a tiny quadrotor ONNX policy carrying the real contract."""
    policy = tiny_policy(quad_contract.observation_size, quad_contract.action.size)
    return export_onnx(policy, quad_contract, deploy_dir / 'quad.onnx')


@pytest.fixture(scope='session')
def joint_urdf(deploy_dir):
    """Path of a 3-joint test URDF (robot 'testarm', 2 kg)."""
    path = deploy_dir / 'testarm.urdf'
    path.write_text(JOINT_URDF)
    return path


@pytest.fixture(scope='session')
def joint_contract(joint_urdf):
    """A joint-position contract for the test URDF: gravity, rates, joints, history of 2,
    trained gains (those of JOINT_PARAMS) and the URDF's joint limits."""
    return Contract(
        task='testarm-reach', robot='testarm', urdf_sha256=file_sha256(joint_urdf),
        policy_rate_hz=50.0, physics_rate_hz=200.0, joint_names=list(JOINT_NAMES),
        default_joint_pos_rad=[0.1, -0.8, 0.0],
        observations=[
            ObservationTermSpec('projected_gravity', 3),
            ObservationTermSpec('ang_vel_b', 3, scale=0.25, clip=10.0),
            ObservationTermSpec('velocity_command', 3),
            ObservationTermSpec('joint_pos_rel', 3),
            ObservationTermSpec('joint_vel', 3, scale=0.05, clip=5.0),
            ObservationTermSpec('action_history', 6)],
        action=ActionSpec('joint_position_offset', 3, params={
            'scale': 0.5, 'kp_nm_per_rad': [20.0, 10.0, 5.0], 'kd_nm_s_per_rad': [1.0, 0.5, 0.2],
            'effort_limit_nm': [30.0, 30.0, 10.0]}),
        robot_params={'mass_kg': 2.0, 'effort_limit_nm': [30.0, 30.0, 10.0],
                      'velocity_limit_rad_s': [20.0, 20.0, 20.0],
                      'joint_pos_limits_rad': [[-2.0, 2.0], [-2.5, 0.5], [-1.0, 1.0]]})


@pytest.fixture(scope='session')
def joint_policy(deploy_dir, joint_contract):
    """Path of a tiny joint ONNX policy carrying joint_contract."""
    policy = tiny_policy(joint_contract.observation_size, joint_contract.action.size, seed=1)
    return export_onnx(policy, joint_contract, deploy_dir / 'joint.onnx')


JOINT_PARAMS = {
    'robot': 'testarm', 'rate_hz': 50.0, 'command_interface': 'joint_position',
    'joint_names': ['ankle', 'hip', 'knee'],   # a different order than the contract's
    'kp': [5.0, 20.0, 10.0], 'kd': [0.2, 1.0, 0.5], 'torque_limit_nm': [2.0, 15.0, 8.0],
    'pos_min_rad': [-0.8, -1.5, -2.0], 'pos_max_rad': [0.8, 1.5, 0.3],
    'max_rate_rad_s': [4.0, 3.0, 3.0], 'max_tilt_rad': 0.8, 'joint_vel_limit_rad_s': 15.0,
    'joint_state_timeout_s': 0.05, 'imu_timeout_s': 0.05, 'soft_start_s': 0.1,
    'fallback': 'damping', 'damping_kd': 0.7,
}


@pytest.fixture(scope='session')
def write_params(deploy_dir):
    """Factory: write a ROS 2 parameter file {node: {ros__parameters: values}}; returns path."""
    counter = iter(range(10 ** 6))

    def write(values: dict, node_name: str = 'policy_node'):
        if node_name == 'policy_node':   # the spec's robot unless the test names another
            values = {'robot': 'quadrotor', **values}
        path = deploy_dir / f'params_{next(counter)}.yaml'
        path.write_text(yaml.safe_dump({node_name: {'ros__parameters': values}}))
        return path
    return write


@pytest.fixture(scope='session')
def quad_params_file(write_params, quad_policy):
    """Quadrotor parameter file: spec defaults with the policy file set."""
    return write_params({'policy_file': str(quad_policy)})


@pytest.fixture(scope='session')
def joint_params_file(write_params, joint_policy, joint_urdf):
    """Joint-robot parameter file for the test URDF and policy."""
    return write_params(dict(JOINT_PARAMS, policy_file=str(joint_policy),
                             urdf_file=str(joint_urdf)))


@pytest.fixture(scope='session')
def contract_variant(deploy_dir):
    """Factory: ONNX copy of a policy whose contract JSON dict went through edit(raw), bound
    to the graph again (bind=False: edited after export, so its digest no longer holds)."""
    counter = iter(range(10 ** 6))

    def make(src, contract: Contract, edit, bind: bool = True):
        raw = json.loads(contract.to_json())
        edit(raw)
        dst = deploy_dir / f'variant_{next(counter)}.onnx'
        return write_with_contract(src, dst, json.dumps(raw), bind)
    return make


@pytest.fixture
def joint_values():
    """A fresh dict of the joint-robot parameters (lists copied)."""
    return {k: list(v) if isinstance(v, list) else v for k, v in JOINT_PARAMS.items()}


@pytest.fixture
def hil_monitor(monkeypatch):
    """A HilMonitor (command topic /cmd) on a private localhost ROS domain, rclpy initialised
    for this test and shut down after it."""
    import rclpy
    from std_msgs.msg import Float64MultiArray
    from sim2real.deploy import ros_msgs
    from sim2real.hil.monitor import HilMonitor
    from sim2real.hil.processes import private_domain_id, ros_environment
    for key, value in ros_environment(private_domain_id(), base={}).items():
        monkeypatch.setenv(key, value)
    rclpy.init()
    mon = HilMonitor('/cmd', Float64MultiArray, ros_msgs.from_float64_array)
    yield mon
    mon.close()
    rclpy.shutdown()
