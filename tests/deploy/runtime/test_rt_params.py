"""Typed parameters from ROS 2 parameter files: spec defaults, unknown keys, wrong types."""

import array
import dataclasses

import pytest
import yaml

from sim2real.deploy.robots.quadrotor.params import QuadrotorParams
from sim2real.deploy.robots.quadruped.params import QuadrupedParams
from sim2real.deploy.bridge.params import declared_parameters
from sim2real.deploy.runtime import (
    load_params, parameter_defaults, ParamError, read_policy_contract, Runtime)

SPEC_POLICY_NODE = {
    'loop_priority': 50, 'timing_file': '', 'record': True, 'record_dir': '',
    'record_max_file_mb': 512.0,
    'ood_window_s': 1.0, 'ood_warn_share': 0.05,
    'policy_file': '', 'robot': 'quadrotor', 'urdf_file': 'quadrotor', 'rate_hz': 100.0,
    'command_interface': 'cmd_vel_legacy', 'odom_topic': 'odom', 'imu_topic': 'imu',
    'setpoint_topic': 'setpoint', 'command_topic': 'cmd_vel_legacy',
    'legacy_thrust_map': 'battery_compensated', 'odom_twist_frame': 'body',
    'odom_angular_velocity': True, 'odom_gyro_tolerance_rad_s': 1.0,
    'odom_twist_window_s': 0.2, 'odom_twist_tolerance_m': 0.03, 'odom_timeout_s': 0.05,
    'imu_timeout_s': 0.05, 'setpoint_timeout_s': 0.0, 'hover_target_m': [0.0, 0.0, 1.5],
    'soft_start_s': 0.2, 'thrust_min_n': 0.0, 'thrust_max_n': 0.43,
    'max_body_rate_rad_s': 6.0, 'max_tilt_rad': 1.0, 'max_speed_m_s': 5.0,
    'max_ang_vel_rad_s': 20.0, 'geofence_min_m': [-2.0, -2.0, -0.1],
    'geofence_max_m': [2.0, 2.0, 3.0], 'ground_height_m': 0.05, 'descend_speed_m_s': 0.4,
    'fallback_level_gain': 4.0, 'fallback_vz_gain': 2.0,
    'fallback_blind_thrust_fraction': 0.9, 'fallback_max_descent_s': 8.0,
    'diagnostics_period_s': 1.0,
}
SPEC_SIM_BRIDGE = {
    'robot': 'quadrotor', 'urdf_file': 'quadrotor', 'physics_rate_hz': 500.0,
    'odom_rate_hz': 200.0, 'imu_rate_hz': 500.0, 'command_interface': 'cmd_vel_legacy',
    'odom_topic': 'odom', 'imu_topic': 'imu', 'command_topic': 'cmd_vel_legacy',
    'start_pos_m': [0.0, 0.0, 1.5], 'start_yaw_rad': 0.0, 'hold_until_thrust_fraction': 0.9,
    'legacy_thrust_map': 'battery_compensated', 'odom_twist_frame': 'body',
    'odom_angular_velocity': True, 'command_timeout_s': 0.1,
    'imu_gyro_noise_std_rad_s': 0.0, 'seed': 0,
    'fault_schedule': '', 'active_faults': '', 'fault_drop_probability': 0.3,
    'fault_delay_s': 0.01, 'fault_delay_jitter_s': 0.005, 'fault_spike_s': 0.2,
    'sensor_latency_s': 0.0, 'sensor_latency_jitter_s': 0.0,
    'record_dir': '', 'base_mass_scale': 1.0, 'base_payload_kg': 0.0,
    'variant': '', 'policy_tick_s': 0.0, 'policy_substep_s': 0.0,
}


def test_defaults_are_the_spec_values():
    """Field names, order and defaults equal the spec's parameter file exactly; the bridge
    declares the spec's sim_bridge section plus its ground-truth rate."""
    assert dataclasses.asdict(QuadrotorParams()) == SPEC_POLICY_NODE
    assert [f.name for f in dataclasses.fields(QuadrotorParams)] == list(SPEC_POLICY_NODE)
    bridge = declared_parameters('quadrotor')
    assert bridge.pop('ground_truth_rate_hz') == 100.0
    assert bridge == SPEC_SIM_BRIDGE


def test_spec_file_loads(write_params):
    """A file holding the spec values loads into QuadrotorParams."""
    assert load_params(write_params(SPEC_POLICY_NODE)) == QuadrotorParams()


def test_robot_is_required_and_must_be_registered(tmp_path):
    """A policy_node section without robot, or with an unregistered one, is refused with the
    registered names."""
    for robot in ({}, {'robot': 'quadcopter'}):
        path = tmp_path / 'p.yaml'
        path.write_text(yaml.safe_dump({'policy_node': {'ros__parameters': {
            'rate_hz': 100.0, **robot}}}))
        with pytest.raises(ParamError, match='parameter "robot".*registered: hand, quadrotor, '
                                             'quadruped'):
            load_params(path)


def test_int_accepted_for_float_and_overrides_win(write_params):
    """rate_hz: 100 (an int) reads as 100.0; an override of thrust_max_n 0.4 replaces 0.43."""
    params = load_params(write_params({'rate_hz': 100}), overrides={'thrust_max_n': 0.4})
    assert isinstance(params.rate_hz, float) and params.rate_hz == 100.0
    assert params.thrust_max_n == 0.4


def test_unknown_key_names_the_closest_valid_name(write_params):
    """'odom_timeout' is rejected and 'odom_timeout_s' suggested."""
    with pytest.raises(ParamError, match='"odom_timeout".*did you mean "odom_timeout_s"'):
        load_params(write_params({'odom_timeout': 0.1}))


@pytest.mark.parametrize('key, value', [
    ('rate_hz', 'fast'), ('rate_hz', True), ('odom_topic', 3), ('hover_target_m', [0.0, 1.0]),
    ('geofence_max_m', 'box'), ('thrust_max_n', float('nan'))])
def test_wrong_type_names_the_key(key, value, write_params):
    """A string rate, a bool rate, an int topic, a 2-vector target or NaN are refused by key."""
    with pytest.raises(ParamError, match=key):
        load_params(write_params({key: value}))


def test_missing_section_is_refused(write_params):
    """A file without a policy_node section is refused, naming the section."""
    with pytest.raises(ParamError, match='policy_node'):
        load_params(write_params({'seed': 1}, node_name='sim_bridge'))


def test_joint_robot_section_reads_joint_params(joint_params_file):
    """robot: testarm (registered as a legged robot) selects its params; lists keep the
    file order (ankle, hip, knee)."""
    params = load_params(joint_params_file)
    assert isinstance(params, QuadrupedParams)
    assert params.joint_names == ['ankle', 'hip', 'knee']
    assert params.kp == [5.0, 20.0, 10.0]


def test_parameter_defaults_list_every_declared_name():
    """policy_node declares the 27 spec names; values are the defaults."""
    defaults = parameter_defaults('quadrotor')
    assert defaults == SPEC_POLICY_NODE
    assert parameter_defaults('testarm')['fallback'] == 'damping'


def test_runtime_from_ros_values_accepts_double_arrays(quad_policy):
    """rclpy's array.array('d') for a double-array parameter reads as a list of floats."""
    values = dict(SPEC_POLICY_NODE, policy_file=str(quad_policy),
                  hover_target_m=array.array('d', [0.0, 0.5, 1.0]))
    runtime = Runtime.from_values(values)
    assert runtime.params.hover_target_m == [0.0, 0.5, 1.0]
    assert read_policy_contract(quad_policy) == runtime.contract
