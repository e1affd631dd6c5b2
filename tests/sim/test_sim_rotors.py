"""Rotor model read from the URDF's <sim2real> element, allocation matrix, URDF errors."""

import numpy as np
import pytest

from sim2real.sim.mjcf import quadrotor_model
from sim2real.sim.rotors import allocation_matrix
from sim2real.urdf import read_rotor_params, UrdfError

KF = 2.8815744627880866e-8      # N/(rad/s)^2
KM = 1.7187300725171606e-10     # N m/(rad/s)^2
W_MAX = 2272.6281256068564      # rad/s
YAW_RATIO = 0.005964552         # km / kf [m], Foerster 2015

VALID = """<?xml version="1.0"?>
<robot name="mini">
  <link name="base_link">
    <inertial>
      <mass value="0.03"/>
      <inertia ixx="1e-5" ixy="0" ixz="0" iyy="1e-5" iyz="0" izz="2e-5"/>
    </inertial>
  </link>
  <link name="rotor_0"/>
  <joint name="rotor_0_joint" type="fixed">
    <parent link="base_link"/>
    <child link="rotor_0"/>
    <origin xyz="0.05 -0.04 0.01"/>
  </joint>
  <sim2real>
    <rotor_model thrust_coefficient="3e-8" torque_coefficient="6e-10" time_constant_s="0.05"
                 max_speed_rad_s="2000"/>
    <rotor link="rotor_0" direction="-1"/>
  </sim2real>
</robot>
"""


def test_shipped_urdf_rotor_values(quad_urdf):
    """The Crazyflie URDF gives kf, km, tau 0.1 s, 4 rotors, directions +1 -1 +1 -1, +-28 mm."""
    rotors = read_rotor_params(quad_urdf)
    assert rotors.thrust_coefficient == KF
    assert rotors.torque_coefficient == KM
    assert rotors.time_constant_s == 0.1
    assert rotors.max_speed_rad_s == W_MAX
    assert rotors.min_speed_rad_s == 0.0
    assert rotors.directions == (1, -1, 1, -1)
    assert rotors.positions_b == ((0.028, -0.028, 0.0), (-0.028, -0.028, 0.0),
                                  (-0.028, 0.028, 0.0), (0.028, 0.028, 0.0))
    # kf w_max^2 = 2.8815744627880866e-8 * 2272.628^2 = 0.14883 N (15.17 g)
    assert rotors.max_thrust_n == pytest.approx(0.14883, abs=1e-4)
    assert rotors.yaw_torque_per_thrust_m == pytest.approx(YAW_RATIO, rel=1e-9)


def test_allocation_of_hover_thrusts_is_pure_weight(quad_urdf):
    """A @ (mg/4 each) = (m g, 0, 0, 0) = (0.26487 N, 0, 0, 0) for m = 0.027 kg."""
    alloc = allocation_matrix(read_rotor_params(quad_urdf))
    assert alloc.shape == (4, 4)
    hover = np.full(4, 0.027 * 9.81 / 4)   # 0.0662175 N per rotor
    np.testing.assert_allclose(alloc @ hover, [0.26487, 0.0, 0.0, 0.0], rtol=0, atol=1e-15)


def test_allocation_columns_by_hand(quad_urdf):
    """1 N on front-right M1 (x=+.028, y=-.028, CCW) gives (1, -0.028, -0.028, -0.005964552)."""
    alloc = allocation_matrix(read_rotor_params(quad_urdf))
    # tau_x = y f, tau_y = -x f, tau_z = -direction * km/kf * f
    np.testing.assert_allclose(alloc[:, 0], [1.0, -0.028, -0.028, -YAW_RATIO], rtol=1e-9)
    # back-right M2 (x=-.028, y=-.028, clockwise): (1, -0.028, +0.028, +0.005964552)
    np.testing.assert_allclose(alloc[:, 1], [1.0, -0.028, 0.028, YAW_RATIO], rtol=1e-9)


def test_minimal_valid_urdf(tmp_path):
    """The template used for the broken variants parses: one clockwise rotor at (.05,-.04,.01)."""
    path = tmp_path / 'mini.urdf'
    path.write_text(VALID)
    rotors = read_rotor_params(path)
    assert rotors.positions_b == ((0.05, -0.04, 0.01),)
    assert rotors.directions == (-1,)
    assert rotors.yaw_torque_per_thrust_m == pytest.approx(0.02)   # 6e-10 / 3e-8


BROKEN = [
    ('unclosed_xml', ('</robot>', ''), 'malformed XML'),
    ('wrong_root', ('robot', 'model'), 'root element is <model>, expected <robot>'),
    ('no_sim2real', ('sim2real>', 'vendor>'), 'no <sim2real><rotor_model .../></sim2real>'),
    ('rotor_not_number', ('direction="-1"', 'direction="cw"'),
     '<rotor direction="cw"> is not a number'),
    ('kf_not_number', ('thrust_coefficient="3e-8"', 'thrust_coefficient="fast"'),
     '<rotor_model thrust_coefficient="fast"> is not a number'),
    ('kf_missing', ('thrust_coefficient="3e-8"', ''),
     '<rotor_model> lacks attribute "thrust_coefficient"'),
    ('rotor_without_joint', ('<rotor link="rotor_0"', '<rotor link="rotor_9"'),
     'rotor link "rotor_9" has no joint to the base'),
    ('direction_two', ('direction="-1"', 'direction="2"'),
     'rotor "rotor_0" direction must be +1 or -1'),
    ('no_rotors', ('<rotor link="rotor_0" direction="-1"/>', ''),
     '<sim2real> lists no <rotor> elements'),
]


@pytest.mark.parametrize('name, edit, message', BROKEN, ids=[b[0] for b in BROKEN])
def test_malformed_urdf_names_file_and_problem(tmp_path, name, edit, message):
    """Each broken URDF raises UrdfError whose text starts with the file and names the fault."""
    text = VALID.replace(*edit)
    assert text != VALID
    path = tmp_path / f'{name}.urdf'
    path.write_text(text)
    with pytest.raises(UrdfError) as info:
        read_rotor_params(path)
    assert str(info.value).startswith(f'{path}: ')
    assert message in str(info.value)


def test_quadrotor_model_rejects_broken_xml(tmp_path):
    """Building the MuJoCo model from malformed XML raises UrdfError, not a MuJoCo error."""
    path = tmp_path / 'broken.urdf'
    path.write_text(VALID.replace('</robot>', ''))
    with pytest.raises(UrdfError, match='malformed XML'):
        quadrotor_model(path, 0.002)


def test_quadrotor_model_requires_base_link(tmp_path):
    """A URDF whose root link is not called base_link is refused by name."""
    path = tmp_path / 'body.urdf'
    path.write_text(VALID.replace('"base_link"', '"body"'))
    with pytest.raises(UrdfError, match=r'no link named "base_link"'):
        quadrotor_model(path, 0.002)


def test_quadrotor_model_rejects_massive_rotor(tmp_path):
    """A rotor link with mass is refused (MuJoCo would silently fuse it into base_link)."""
    massive = ('<link name="rotor_0"><inertial><mass value="0.007"/>'
               '<inertia ixx="1e-7" ixy="0" ixz="0" iyy="1e-7" iyz="0" izz="1e-7"/>'
               '</inertial></link>')
    path = tmp_path / 'massive.urdf'
    path.write_text(VALID.replace('<link name="rotor_0"/>', massive))
    with pytest.raises(UrdfError, match='rotor link "rotor_0" has mass'):
        quadrotor_model(path, 0.002)
