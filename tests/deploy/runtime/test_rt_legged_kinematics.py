"""Pinocchio leg kinematics against hand-worked numbers and MuJoCo on the same URDF."""

import subprocess
import sys

import mujoco
import numpy as np
import pytest

from sim2real.deploy.runtime.legged_kinematics import LeggedKinematics
from sim2real.sim.legged import FOOT_LINKS, JOINT_NAMES, legged_model

HIP_X, HIP_Y, THIGH_Y, LINK = 0.1934, 0.0465, 0.0955, 0.213


@pytest.fixture(scope='module')
def urdf(repo_root):
    """Path of the shipped Go2-class URDF."""
    return repo_root / 'urdf' / 'quadruped.urdf'


@pytest.fixture(scope='module')
def kin(urdf):
    """Kinematics in policy joint order with the four foot frames."""
    return LeggedKinematics(urdf, JOINT_NAMES, FOOT_LINKS)


@pytest.fixture(scope='module')
def model_info(urdf):
    """The MuJoCo model of the same URDF."""
    return legged_model(urdf, 0.005)


def _random_quat(rng):
    """A uniformly random unit quaternion (w, x, y, z)."""
    quat = rng.normal(size=4)
    return quat / np.linalg.norm(quat)


def _base_rotation(data):
    """World <- base rotation matrix of the MuJoCo base body."""
    return data.xmat[1].reshape(3, 3)


def test_straight_and_bent_legs_by_hand(kin):
    """q = 0: feet 0.426 m under the thigh joints at (+-0.1934, +-0.142). FL calf -pi/2:
    the FL shank points forward, foot at (0.1934 + 0.213, 0.142, -0.213)."""
    q = np.zeros(12)
    sx, sy = np.array([1, 1, -1, -1]), np.array([1, -1, 1, -1])
    expected = np.stack([sx * HIP_X, sy * (HIP_Y + THIGH_Y), np.full(4, -2 * LINK)], axis=1)
    np.testing.assert_allclose(kin.foot_positions_b(q), expected, atol=1e-12)
    q[JOINT_NAMES.index('FL_calf_joint')] = -np.pi / 2
    np.testing.assert_allclose(kin.foot_positions_b(q)[0], [HIP_X + LINK, 0.142, -LINK],
                               atol=1e-12)


def test_foot_positions_equal_mujoco_for_20_random_states(kin, model_info):
    """Random joints within limits and random base poses: Pinocchio's feet [base frame] equal
    MuJoCo's foot sphere centres mapped into the base frame, atol 1e-6."""
    model, info = model_info
    data = mujoco.MjData(model)
    rng = np.random.default_rng(4)
    low, high = info.pos_limits_rad.T
    for _ in range(20):
        q = rng.uniform(low, high)
        data.qpos[:3] = rng.uniform(-1.0, 1.0, 3)
        data.qpos[3:7] = _random_quat(rng)
        data.qpos[info.qpos_adr] = q
        mujoco.mj_kinematics(model, data)
        rot = _base_rotation(data)
        feet_b = (data.geom_xpos[info.foot_geom_ids] - data.xpos[1]) @ rot
        np.testing.assert_allclose(kin.foot_positions_b(q), feet_b, atol=1e-6)


def test_foot_jacobian_is_the_derivative(kin, model_info):
    """Central differences of foot positions (step 1e-6 rad) equal the Jacobians, atol 1e-8."""
    q = model_info[1].default_joint_pos_rad
    jac = kin.foot_jacobians_b(q)
    assert jac.shape == (4, 3, 12)
    for k in range(12):
        dq = np.zeros(12)
        dq[k] = 1e-6
        diff = (kin.foot_positions_b(q + dq) - kin.foot_positions_b(q - dq)) / 2e-6
        np.testing.assert_allclose(jac[:, :, k], diff, atol=1e-8)
    # a foot moves only with its own leg's joints
    assert not jac[0, :, 3:].any() and jac[0, :, :3].any()


def test_leg_odometry_rolling_about_planted_feet_by_hand(kin):
    """Legs straight (feet 0.426 m below the base, symmetric), qd = 0, roll rate 1 rad/s:
    v_b = -(omega x p) = -((1,0,0) x (0,0,-0.426)) = (0, -0.426, 0) m/s; yaw gives 0."""
    q, qd, stance = np.zeros(12), np.zeros(12), np.ones(4, dtype=bool)
    roll = kin.base_velocity_from_legs(q, qd, np.array([1.0, 0.0, 0.0]), stance)
    np.testing.assert_allclose(roll, [0.0, -2 * LINK, 0.0], atol=1e-12)
    yaw = kin.base_velocity_from_legs(q, qd, np.array([0.0, 0.0, 1.0]), stance)
    np.testing.assert_allclose(yaw, [0.0, 0.0, 0.0], atol=1e-12)
    assert np.isnan(kin.base_velocity_from_legs(q, qd, np.zeros(3), np.zeros(4, bool))).all()


def test_leg_odometry_equals_the_mujoco_base_velocity(kin, model_info):
    """Base at v_b = (0.4, -0.15, 0.05) m/s, omega_b = (0.3, -0.2, 0.5) rad/s; stance joint
    rates from the Jacobian pseudo-inverse so the stance feet stay still (checked in MuJoCo);
    the RR foot swings with arbitrary joint rates and is left out by the stance mask."""
    model, info = model_info
    rng = np.random.default_rng(7)
    q = info.default_joint_pos_rad + rng.uniform(-0.2, 0.2, 12)
    v_b, omega_b = np.array([0.4, -0.15, 0.05]), np.array([0.3, -0.2, 0.5])
    jac, feet = kin.foot_jacobians_b(q), kin.foot_positions_b(q)
    qd = np.zeros(12)
    for foot in range(3):                       # legs' columns are disjoint: sum the solutions
        qd += np.linalg.pinv(jac[foot]) @ -(v_b + np.cross(omega_b, feet[foot]))
    qd[9:] = [2.0, -3.0, 4.0]                   # RR swings
    data = mujoco.MjData(model)
    data.qpos[:3], data.qpos[3:7] = [0.1, -0.2, 0.3], _random_quat(rng)
    data.qpos[info.qpos_adr] = q
    mujoco.mj_kinematics(model, data)
    data.qvel[:3] = _base_rotation(data) @ v_b          # free joint: world-frame linear
    data.qvel[3:6] = omega_b                            # and body-frame angular velocity
    data.qvel[info.qvel_adr] = qd
    mujoco.mj_forward(model, data)
    vel = np.zeros(6)
    for foot in range(4):
        mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_BODY,
                                 info.foot_body_ids[foot], vel, 0)
        assert (np.linalg.norm(vel[3:]) < 1e-9) == (foot < 3)
    stance = np.array([True, True, True, False])
    estimate = kin.base_velocity_from_legs(q, qd, data.qvel[3:6], stance)
    np.testing.assert_allclose(estimate, _base_rotation(data).T @ data.qvel[:3], atol=1e-9)
    np.testing.assert_allclose(estimate, v_b, atol=1e-9)


def test_joint_names_must_match_the_urdf(urdf):
    """A missing or unknown joint name, or an unknown foot frame, is refused by name."""
    with pytest.raises(ValueError, match='missing .*FL_knee_joint.*not listed .*FL_calf'):
        LeggedKinematics(urdf, [n.replace('calf', 'knee') if n.startswith('FL_calf') else n
                                for n in JOINT_NAMES], FOOT_LINKS)
    with pytest.raises(ValueError, match='not listed .*RR_hip_joint'):
        LeggedKinematics(urdf, JOINT_NAMES[:-3], FOOT_LINKS)
    with pytest.raises(ValueError, match='FL_toe'):
        LeggedKinematics(urdf, JOINT_NAMES, ['FL_toe'])


def test_policy_order_is_matched_by_name(urdf, kin):
    """Joints given in another order (all hips, thighs, calves): the same feet result."""
    order = [JOINT_NAMES.index(f'{leg}_{k}_joint') for k in ('hip', 'thigh', 'calf')
             for leg in ('FL', 'FR', 'RL', 'RR')]
    shuffled = LeggedKinematics(urdf, [JOINT_NAMES[i] for i in order], FOOT_LINKS)
    q = np.linspace(-0.5, 0.5, 12) + np.tile([0.0, 0.9, -1.6], 4)
    np.testing.assert_allclose(shuffled.foot_positions_b(q[order]), kin.foot_positions_b(q))


BLOCKED_IMPORT = r"""
import sys
class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('torch', 'mujoco', 'rclpy'):
            raise ImportError(f'{name} is blocked')
sys.meta_path.insert(0, Blocker())
from sim2real.deploy.runtime.legged_kinematics import LeggedKinematics
kin = LeggedKinematics(sys.argv[1], [f'{l}_{k}_joint' for l in ('FL', 'FR', 'RL', 'RR')
                       for k in ('hip', 'thigh', 'calf')], ['FL_foot'])
print(kin.foot_positions_b([0.0] * 12).round(4).tolist())
"""


def test_imports_without_torch_mujoco_or_rclpy(urdf, repo_root):
    """With torch, mujoco and rclpy blocked, the module loads the URDF and computes a foot."""
    proc = subprocess.run([sys.executable, '-c', BLOCKED_IMPORT, str(urdf)], cwd=repo_root,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == '[[0.1934, 0.142, -0.426]]'
