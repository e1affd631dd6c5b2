"""URDF -> MjSpec: actuators, mass and inertia, and agreement with Pinocchio on one URDF."""

import xml.etree.ElementTree as ET

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from sim2real.sim.mjcf import BASE_BODY, quadrotor_model

YAW_RATIO = 0.005964552   # km / kf [m]


@pytest.fixture(scope='module')
def model(quad_urdf):
    """The compiled quadrotor model at 500 Hz."""
    return quadrotor_model(quad_urdf, 0.002)[0]


@pytest.fixture(scope='module')
def urdf_inertial(quad_urdf):
    """(mass, (ixx, iyy, izz)) of base_link read straight from the URDF text."""
    link = ET.parse(quad_urdf).getroot().find("link[@name='base_link']")
    inertia = link.find('inertial/inertia')
    return (float(link.find('inertial/mass').get('value')),
            tuple(float(inertia.get(k)) for k in ('ixx', 'iyy', 'izz')))


def test_four_rotor_actuators_with_yaw_gear(model):
    """4 site actuators: gear (0,0,1, 0,0, -dir*km/kf), ctrl in [0, 0.14883 N]."""
    assert model.nu == 4
    assert [model.actuator(i).name for i in range(4)] == [f'rotor_{i}' for i in range(4)]
    directions = np.array([1, -1, 1, -1])
    expected = np.zeros((4, 6))
    expected[:, 2] = 1.0
    expected[:, 5] = -directions * YAW_RATIO     # -0.005964552, +, -, +
    np.testing.assert_allclose(model.actuator_gear, expected, rtol=1e-9, atol=0)
    assert (model.actuator_trntype == mujoco.mjtTrn.mjTRN_SITE).all()
    np.testing.assert_allclose(model.actuator_ctrlrange, [[0.0, 0.14883]] * 4, atol=1e-4)


def test_total_mass_and_timestep(model):
    """The whole model weighs 0.027 kg (base only) and steps at 0.002 s."""
    assert mujoco.mj_getTotalmass(model) == pytest.approx(0.027, abs=1e-12)
    assert model.body_subtreemass[1] == pytest.approx(0.027, abs=1e-12)
    assert model.opt.timestep == 0.002
    assert model.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE


def test_mass_and_inertia_equal_the_urdf_in_body_axes(model, urdf_inertial):
    """body_mass = 0.027 and body_inertia = (ixx, iyy, izz) about the body axes (no iquat)."""
    mass, inertia = urdf_inertial
    base = model.body(BASE_BODY)
    assert (mass, inertia) == (0.027, (1.657171e-5, 1.6655602e-5, 2.9261652e-5))
    assert base.mass[0] == mass
    np.testing.assert_array_equal(base.ipos, [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(base.iquat, [1.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(base.inertia, inertia, rtol=1e-12)


def test_sensors_and_imu_site(model):
    """The IMU site sits at the CoM and carries gyro, accelerometer, position and quaternion."""
    np.testing.assert_array_equal(model.site('imu').pos, [0.0, 0.0, 0.0])
    names = [model.sensor(i).name for i in range(model.nsensor)]
    assert names == ['gyro', 'accelerometer', 'base_pos', 'base_quat']


def _mujoco_inertia_tensor_b(model):
    """Full inertia tensor of the base about its CoM in body axes: R diag(I) R^T."""
    rot = np.zeros(9)
    mujoco.mju_quat2Mat(rot, model.body_iquat[1])
    rot = rot.reshape(3, 3)
    return rot @ np.diag(model.body_inertia[1]) @ rot.T


def test_pinocchio_and_mujoco_agree_on_the_same_urdf(quad_urdf, model):
    """Pinocchio and MuJoCo read the same rotor hubs, total mass, CoM and inertia tensor."""
    pmodel = pin.buildModelFromUrdf(str(quad_urdf), pin.JointModelFreeFlyer())
    pdata = pmodel.createData()
    pin.framesForwardKinematics(pmodel, pdata, pin.neutral(pmodel))
    for i in range(4):
        hub_pin = pdata.oMf[pmodel.getFrameId(f'rotor_{i}')].translation
        np.testing.assert_allclose(model.site(f'rotor_{i}').pos, hub_pin, atol=1e-12)
    # the hubs are the +-28 mm X pattern of the firmware's motor order M1..M4
    np.testing.assert_allclose(
        [model.site(f'rotor_{i}').pos for i in range(4)],
        [[0.028, -0.028, 0], [-0.028, -0.028, 0], [-0.028, 0.028, 0], [0.028, 0.028, 0]])
    assert pin.computeTotalMass(pmodel) == pytest.approx(mujoco.mj_getTotalmass(model),
                                                         abs=1e-12)
    base = pmodel.inertias[1]
    np.testing.assert_allclose(base.lever, model.body_ipos[1], atol=1e-12)
    np.testing.assert_allclose(base.inertia, _mujoco_inertia_tensor_b(model), rtol=1e-9,
                               atol=1e-15)
