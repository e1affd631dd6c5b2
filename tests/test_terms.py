"""Observation and action math of sim2real.terms: one array-API function for numpy and torch."""

import math

import mujoco
import numpy as np
import pytest
import torch

from sim2real import terms

S = math.sqrt(0.5)  # cos(45 deg) = sin(45 deg)


def _random_unit_quats(count, seed=0):
    """Uniformly random unit quaternions (w, x, y, z), (count, 4) float64."""
    q = np.random.default_rng(seed).normal(size=(count, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def test_quat_to_rotmat_matches_mujoco():
    """quat_to_rotmat equals mujoco.mju_quat2Mat for 64 random unit quaternions."""
    quats = _random_unit_quats(64)
    ours = terms.quat_to_rotmat(quats)
    assert ours.shape == (64, 3, 3)
    for q, r in zip(quats, ours):
        expected = np.zeros(9)
        mujoco.mju_quat2Mat(expected, q)
        np.testing.assert_allclose(r, expected.reshape(3, 3), atol=1e-12)


def test_quat_to_rotmat_same_result_numpy_and_torch():
    """The same function gives identical float64 matrices from numpy and torch inputs."""
    quats = _random_unit_quats(32, seed=1)
    from_numpy = terms.quat_to_rotmat(quats)
    from_torch = terms.quat_to_rotmat(torch.from_numpy(quats))
    assert isinstance(from_numpy, np.ndarray)
    assert isinstance(from_torch, torch.Tensor)
    np.testing.assert_array_equal(from_torch.numpy(), from_numpy)


def test_quat_to_rotmat_yaw_90_by_hand():
    """A +90 deg yaw (w = z = sqrt(1/2)) maps body x to world y: R = [[0,-1,0],[1,0,0],[0,0,1]]."""
    r = terms.quat_to_rotmat(np.array([S, 0.0, 0.0, S]))
    np.testing.assert_allclose(r, [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-15)


def test_rotations_are_inverse_and_match_by_hand():
    """world_to_body undoes body_to_world; for a +90 deg yaw, world x is body -y."""
    rot = terms.quat_to_rotmat(torch.from_numpy(_random_unit_quats(16, seed=2)))
    vec = torch.from_numpy(np.random.default_rng(3).normal(size=(16, 3)))
    there_and_back = terms.rotate_world_to_body(rot, terms.rotate_body_to_world(rot, vec))
    torch.testing.assert_close(there_and_back, vec, rtol=0, atol=1e-12)
    back_and_there = terms.rotate_body_to_world(rot, terms.rotate_world_to_body(rot, vec))
    torch.testing.assert_close(back_and_there, vec, rtol=0, atol=1e-12)
    yaw90 = terms.quat_to_rotmat(np.array([S, 0.0, 0.0, S]))
    # R^T (1, 0, 0) = first row of R = (0, -1, 0); R (1, 0, 0) = first column = (0, 1, 0)
    np.testing.assert_allclose(terms.rotate_world_to_body(yaw90, np.array([1.0, 0, 0])),
                               [0, -1, 0], atol=1e-15)
    np.testing.assert_allclose(terms.rotate_body_to_world(yaw90, np.array([1.0, 0, 0])),
                               [0, 1, 0], atol=1e-15)


@pytest.mark.parametrize('quat, expected', [
    # level: gravity straight down the body z axis
    ((1.0, 0.0, 0.0, 0.0), (0.0, 0.0, -1.0)),
    # +90 deg pitch about y: R = [[0,0,1],[0,1,0],[-1,0,0]], nose points down (R x = -z_w),
    # so gravity lies along body +x: -R[2, :] = (1, 0, 0)
    ((S, 0.0, S, 0.0), (1.0, 0.0, 0.0)),
    # +90 deg roll about x: R = [[1,0,0],[0,0,-1],[0,1,0]], left side up, gravity along -y
    ((S, S, 0.0, 0.0), (0.0, -1.0, 0.0)),
])
def test_projected_gravity_by_hand(quat, expected):
    """Projected gravity is (0,0,-1) level, (1,0,0) pitched +90 deg, (0,-1,0) rolled +90."""
    for xp_quat in (np.array(quat), torch.tensor(quat, dtype=torch.float64)):
        g = terms.projected_gravity(terms.quat_to_rotmat(xp_quat))
        np.testing.assert_allclose(np.asarray(g), expected, atol=1e-15)


def test_projected_gravity_is_world_down_in_body_frame():
    """projected_gravity equals rotate_world_to_body of (0, 0, -1) for random attitudes."""
    rot = terms.quat_to_rotmat(_random_unit_quats(16, seed=4))
    down = np.broadcast_to([0.0, 0.0, -1.0], (16, 3))
    np.testing.assert_allclose(terms.projected_gravity(rot),
                               terms.rotate_world_to_body(rot, down), atol=1e-15)


def test_flatten_rotmat_is_row_major():
    """flatten_rotmat puts R[i, j] at index 3 i + j: yaw 90 gives (0,-1,0, 1,0,0, 0,0,1)."""
    flat = terms.flatten_rotmat(terms.quat_to_rotmat(torch.tensor([[S, 0.0, 0.0, S]])))
    assert flat.shape == (1, 9)
    torch.testing.assert_close(flat[0], torch.tensor([0, -1, 0, 1, 0, 0, 0, 0, 1.0]),
                               rtol=0, atol=1e-7)


def test_position_error_is_target_minus_position():
    """position_error_w((1, 2, 3), (0.5, 2.5, 1)) = (0.5, -0.5, 2)."""
    err = terms.position_error_w(np.array([1.0, 2.0, 3.0]), np.array([0.5, 2.5, 1.0]))
    np.testing.assert_allclose(err, [0.5, -0.5, 2.0])


@pytest.mark.parametrize('array', [np.array, torch.tensor])
def test_scale_clip_by_hand(array):
    """scale 0.5 then clip 1: (-3, -0.5, 0.2, 4) -> (-1, -0.25, 0.1, 1); no clip keeps +-1.5, 2."""
    values = array([-3.0, -0.5, 0.2, 4.0])
    np.testing.assert_allclose(np.asarray(terms.scale_clip(values, 0.5, 1.0)),
                               [-1.0, -0.25, 0.1, 1.0])
    np.testing.assert_allclose(np.asarray(terms.scale_clip(values, 0.5, None)),
                               [-1.5, -0.25, 0.1, 2.0])


def test_action_maps_are_the_same_on_torch_and_numpy():
    """rotor_speed_command: -1 -> min, 0 -> midpoint, +1 -> max; joint_offset_target:
    default + scale * a; torch (training) and numpy (deploy) agree to the last bit."""
    a = np.array([-1.0, 0.0, 0.5, 1.0])
    speeds = terms.rotor_speed_command(a, 100.0, 2500.0)
    np.testing.assert_allclose(speeds, [100.0, 1300.0, 1900.0, 2500.0])
    assert terms.rotor_speed_command(torch.from_numpy(a), 100.0, 2500.0).numpy().tolist() == \
        speeds.tolist()
    default, scale = np.array([0.1, -0.8, 1.5, 0.0]), np.array([0.25, 0.25, 0.5, 0.5])
    target = terms.joint_offset_target(default, scale, a)
    np.testing.assert_allclose(target, [-0.15, -0.8, 1.75, 0.5])
    assert terms.joint_offset_target(torch.from_numpy(default), torch.from_numpy(scale),
                                     torch.from_numpy(a)).numpy().tolist() == target.tolist()


def test_a_rotation_vector_survives_the_quaternion_and_back():
    """quat_to_rotvec(quat_from_rotvec(r)) == r for 0.6 rad, 3 rad, 1e-9 rad and none, with
    either sign of the quaternion; on torch as on numpy."""
    r = np.array([[0.3, -0.2, 0.5], [3.0, 0.1, 0.0], [1e-9, 0.0, 0.0], [0.0, 0.0, 0.0]])
    q = terms.quat_from_rotvec(r)
    np.testing.assert_allclose(terms.quat_to_rotvec(q), r, atol=1e-15)
    np.testing.assert_allclose(terms.quat_to_rotvec(-q), r, atol=1e-15)
    np.testing.assert_allclose(terms.quat_to_rotvec(torch.from_numpy(q)).numpy(), r,
                               atol=1e-15)
