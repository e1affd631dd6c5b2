"""Real MuJoCo physics through MujocoBatchBackend and QuadrotorActuator."""

import math

import mujoco
import numpy as np
import pytest
import torch

from sim2real.sim.backend import MujocoBatchBackend
from sim2real.sim.mjcf import quadrotor_model
from sim2real.sim.quadrotor import cap_rotor_thrusts, motor_lag, QuadrotorActuator
from sim2real.sim.rotors import allocation_matrix

MASS = 0.027
G = 9.81
DT = 0.002


@pytest.fixture(scope='module')
def model_and_rotors(quad_urdf):
    """The quadrotor model at 500 Hz and its rotor parameters."""
    return quadrotor_model(quad_urdf, DT)


def _backend(model_and_rotors, num_envs=4, height=1.0):
    """A fresh backend with every drone level and at rest at the given height."""
    backend = MujocoBatchBackend(model_and_rotors[0], num_envs, num_threads=1)
    ids = torch.arange(num_envs)
    backend.reset(ids)
    pos = torch.tensor([[0.0, 0.0, height]]).repeat(num_envs, 1)
    quat = torch.tensor([[1.0, 0.0, 0.0, 0.0]]).repeat(num_envs, 1)
    backend.write_root_state(ids, pos, quat, torch.zeros(num_envs, 3), torch.zeros(num_envs, 3))
    return backend


def _actuator(model_and_rotors, num_envs, mode):
    """A nominal-parameter actuator with the motors spinning at hover speed."""
    model, rotors = model_and_rotors
    act = QuadrotorActuator(rotors, model.body_inertia[1], num_envs, xp=torch,
                            dtype=torch.float64)
    act.mode = mode
    act.reset(torch.arange(num_envs), act.hover_speed_rad_s(MASS))
    return act


def _fly(backend, act, substeps):
    """Run the actuator and physics together for substeps physics steps."""
    def before_substep(dt_s):
        backend.ctrl[:] = act.substep(backend.root_ang_vel_b, dt_s)
    backend.simulate(substeps, before_substep)


def test_hover_speed_by_hand(model_and_rotors):
    """Hover speed sqrt(m g / (4 kf)) = sqrt(0.26487 / 1.15263e-7) = 1515.9 rad/s."""
    act = _actuator(model_and_rotors, 1, 'rotor_speeds')
    assert act.hover_speed_rad_s(MASS) == pytest.approx(1515.903, abs=1e-3)


def test_hover_speed_holds_altitude(model_and_rotors):
    """Holding the hover rotor speed keeps the altitude within 1 mm over 1 s (500 steps)."""
    backend = _backend(model_and_rotors, num_envs=2)
    act = _actuator(model_and_rotors, 2, 'rotor_speeds')
    act.command = torch.full((2, 4), act.hover_speed_rad_s(MASS), dtype=torch.float64)
    _fly(backend, act, 500)
    assert (backend.root_pos_w[:, 2] - 1.0).abs().max() < 1e-3
    assert backend.root_lin_vel_w.abs().max() < 1e-3
    assert backend.root_ang_vel_b.abs().max() < 1e-9


def test_motor_lag_one_step_by_hand():
    """w0 = 1000, cmd = 2000, dt 2 ms, tau 0.15 s: 2000 - 1000 exp(-1/75) = 1013.24484 rad/s."""
    # exp(-0.002 / 0.15) = 0.98675516; 2000 + (1000 - 2000) * 0.98675516 = 1013.24484
    expected = 2000.0 + (1000.0 - 2000.0) * math.exp(-0.002 / 0.15)
    assert expected == pytest.approx(1013.24484, abs=1e-5)
    assert motor_lag(np.array([1000.0]), 2000.0, 0.002, 0.15)[0] == pytest.approx(expected)
    out = motor_lag(torch.tensor([1000.0, 1000.0], dtype=torch.float64), 2000.0, 0.002,
                    torch.tensor([0.15, 0.06], dtype=torch.float64))
    # tau 0.06 s: 2000 - 1000 exp(-1/30) = 2000 - 967.2161 = 1032.7839
    torch.testing.assert_close(out, torch.tensor([expected, 1032.78390], dtype=torch.float64),
                               rtol=0, atol=1e-5)


def test_motor_lag_is_exact_over_split_steps():
    """Two 1 ms steps equal one 2 ms step (exact zero-order-hold solution), 5 tau reach 99.3 %."""
    one = motor_lag(np.array([0.0]), 1000.0, 0.002, 0.15)
    two = motor_lag(motor_lag(np.array([0.0]), 1000.0, 0.001, 0.15), 1000.0, 0.001, 0.15)
    np.testing.assert_allclose(one, two, rtol=1e-12)
    # 1 - exp(-5) = 0.993262
    assert motor_lag(np.array([0.0]), 1000.0, 0.75, 0.15)[0] == pytest.approx(993.262, abs=1e-3)


def test_actuator_substep_thrust_and_clipping(model_and_rotors):
    """substep lags toward the clipped command and returns kf w^2 per rotor [N]."""
    _, rotors = model_and_rotors
    act = _actuator(model_and_rotors, 1, 'rotor_speeds')
    act.reset(torch.tensor([0]), 1000.0)
    act.command = torch.tensor([[2000.0, 2000.0, 5000.0, -50.0]], dtype=torch.float64)
    thrust = act.substep(torch.zeros(1, 3, dtype=torch.float64), DT)
    decay = math.exp(-DT / 0.1)   # the URDF's tau 0.1 s
    # 5000 clips to w_max = 2272.628, -50 clips to w_min = 0
    speeds = [2000 - 1000 * decay, 2000 - 1000 * decay,
              rotors.max_speed_rad_s - (rotors.max_speed_rad_s - 1000) * decay, 1000 * decay]
    torch.testing.assert_close(act.speed_rad_s[0], torch.tensor(speeds, dtype=torch.float64))
    # w = 2000 - 1000 exp(-0.002 / 0.1) = 1019.80133; w^2 kf = 1039994.7 * 2.88157e-8 = 0.0299682 N
    assert thrust[0, 0].item() == pytest.approx(0.0299682, abs=1e-7)
    torch.testing.assert_close(thrust[0], rotors.thrust_coefficient
                               * torch.tensor(speeds, dtype=torch.float64) ** 2)


@pytest.mark.parametrize('axis', [0, 1, 2])
def test_body_rate_step_produces_rate_of_the_same_sign(model_and_rotors, axis):
    """A +1 rad/s roll, pitch or yaw command gives a positive rate about that axis only."""
    backend = _backend(model_and_rotors, num_envs=1)
    act = _actuator(model_and_rotors, 1, 'thrust_body_rates')
    command = torch.tensor([[MASS * G, 0.0, 0.0, 0.0]], dtype=torch.float64)
    command[0, 1 + axis] = 1.0
    act.command = command
    _fly(backend, act, 50)   # 0.1 s
    rate = backend.root_ang_vel_b[0]
    assert rate[axis] > 0.02
    others = [i for i in range(3) if i != axis]
    assert rate[others].abs().max() < 1e-6 * rate[axis]


def test_rate_controller_torque_uses_body_axis_inertia(model_and_rotors):
    """Roll command 1 rad/s at rest asks tau_x = Ixx kp = 1.657171e-5 * 40 = 6.628684e-4 N m."""
    _, rotors = model_and_rotors
    act = _actuator(model_and_rotors, 3, 'thrust_body_rates')
    command = torch.tensor([[MASS * G, 1.0, 0.0, 0.0], [MASS * G, 0.0, 1.0, 0.0],
                            [MASS * G, 0.0, 0.0, 1.0]], dtype=torch.float64)
    speeds = act.rate_control(command, torch.zeros(3, 3, dtype=torch.float64), DT)
    wrench = (rotors.thrust_coefficient * speeds ** 2).numpy() @ allocation_matrix(rotors).T
    # Ixx kp_roll, Iyy kp_pitch = 1.6655602e-5 * 40, Izz kp_yaw = 2.9261652e-5 * 10
    np.testing.assert_allclose(np.diag(wrench[:, 1:]), [6.628684e-4, 6.6622408e-4, 2.9261652e-4],
                               rtol=1e-9)
    np.testing.assert_allclose(wrench[:, 0], MASS * G, rtol=1e-12)


def test_rate_controller_matches_the_torque_law_while_spinning(model_and_rotors):
    """Spinning steadily at w, the mixed thrusts give tau = J Kp (w_cmd - w) + w x J w.

    By hand for w = (3, -2, 5) rad/s, w_cmd = (3.1, -2, 4.9), J = diag(Ixx, Iyy, Izz): the
    gyroscopic part w x J w = ((Izz - Iyy) wy wz, (Ixx - Izz) wz wx, (Iyy - Ixx) wx wy),
    which is most of the roll and pitch torque here; no rotor saturates.
    """
    model, rotors = model_and_rotors
    act = _actuator(model_and_rotors, 1, 'thrust_body_rates')
    w = np.array([3.0, -2.0, 5.0])
    command = np.array([MASS * G, 3.1, -2.0, 4.9])
    act.last_ang_vel_b[:] = torch.tensor(w)   # steady: no angular acceleration
    speeds = act.rate_control(torch.tensor(command[None]), torch.tensor(w[None]), DT)
    thrusts = rotors.thrust_coefficient * speeds.numpy()[0] ** 2
    assert 0.0 < thrusts.min() and thrusts.max() < rotors.max_thrust_n
    wrench = allocation_matrix(rotors) @ thrusts
    inertia = model.body_inertia[1]
    ixx, iyy, izz = inertia
    gyro = np.array([(izz - iyy) * -2.0 * 5.0, (ixx - izz) * 5.0 * 3.0, (iyy - ixx) * 3.0 * -2.0])
    np.testing.assert_allclose(gyro, np.cross(w, inertia * w), rtol=1e-12)
    expected = inertia * np.array([40.0, 40.0, 10.0]) * (command[1:] - w) + gyro
    np.testing.assert_allclose(wrench[1:], expected, rtol=1e-9)
    np.testing.assert_allclose(wrench[0], MASS * G, rtol=1e-12)


def test_capping_keeps_the_torques_and_gives_up_thrust():
    """Mixer output (0.17, 0.15, 0.13, 0.11) N against a 0.14883 N maximum: all four drop by
    the excess 0.02117 N, so rotor differences (the torques) stay; an all-negative row goes
    to zero; a row within limits is untouched."""
    f_max = 0.14883
    demand = np.array([[0.17, 0.15, 0.13, 0.11], [-0.01, -0.02, -0.01, -0.03],
                       [0.05, 0.06, 0.07, 0.08]])
    capped = cap_rotor_thrusts(demand, f_max)
    np.testing.assert_allclose(capped[0], demand[0] - (0.17 - f_max), rtol=1e-12)
    np.testing.assert_allclose(np.diff(capped[0]), np.diff(demand[0]), rtol=1e-12)
    assert capped[0].max() == pytest.approx(f_max) and (capped[1] == 0.0).all()
    np.testing.assert_array_equal(capped[2], demand[2])
    # torch gives the same numbers (training and the HIL bridge share the function)
    np.testing.assert_array_equal(cap_rotor_thrusts(torch.tensor(demand), f_max).numpy(), capped)


def test_full_thrust_with_a_roll_command_still_rolls(model_and_rotors):
    """Full collective thrust (4 x max) and a 5 rad/s roll command at rest: the rate loop
    gets its whole roll torque (Ixx kp 5 = 3.31e-3 N m) for 0.0166 N less thrust per rotor,
    where clipping each rotor at its maximum would have given half the torque."""
    _, rotors = model_and_rotors
    act = _actuator(model_and_rotors, 1, 'thrust_body_rates')
    command = torch.tensor([[4 * rotors.max_thrust_n, 5.0, 0.0, 0.0]], dtype=torch.float64)
    speeds = act.rate_control(command, torch.zeros(1, 3, dtype=torch.float64), DT)
    wrench = allocation_matrix(rotors) @ (rotors.thrust_coefficient * speeds.numpy()[0] ** 2)
    np.testing.assert_allclose(wrench[1], 1.657171e-5 * 40 * 5, rtol=1e-6)
    assert wrench[0] < 4 * rotors.max_thrust_n


def test_rate_controller_damps_the_measured_angular_acceleration(model_and_rotors):
    """Rates rising from 0 to (0.01, -0.02, 0.005) rad/s in one 2 ms substep (dw/dt = (5,
    -10, 2.5) rad/s^2) at a zero rate command: tau = -J (Kp w + Kd dw/dt) + w x J w, with
    Kp w + Kd dw/dt = (40 * 0.01 + 2 * 5, 40 * -0.02 + 2 * -10, 10 * 0.005 + 0.5 * 2.5);
    the first substep after a reset has no derivative."""
    model, rotors = model_and_rotors
    inertia = model.body_inertia[1]
    act = _actuator(model_and_rotors, 1, 'thrust_body_rates')
    command = torch.tensor([[MASS * G, 0.0, 0.0, 0.0]], dtype=torch.float64)
    w = torch.tensor([[0.01, -0.02, 0.005]], dtype=torch.float64)

    def torque():
        speeds = act.rate_control(command, w, DT)
        return allocation_matrix(rotors) @ (rotors.thrust_coefficient * speeds.numpy()[0] ** 2)
    fresh = torque()   # NaN last rates after reset: proportional part only
    np.testing.assert_allclose(fresh[1:], -inertia * np.array([0.4, -0.8, 0.05]) + np.cross(
        w[0].numpy(), inertia * w[0].numpy()), rtol=1e-9)
    act.last_ang_vel_b[:] = 0.0
    np.testing.assert_allclose(torque()[1:], -inertia * np.array([10.4, -20.8, 1.3]) + np.cross(
        w[0].numpy(), inertia * w[0].numpy()), rtol=1e-9)


@pytest.mark.parametrize('faster, sign', [((1, 3), 1.0), ((0, 2), -1.0)])
def test_yaw_direction_convention(model_and_rotors, faster, sign):
    """M2/M4 (clockwise, direction -1) faster yaws the body positive; M1/M3 faster, negative."""
    backend = _backend(model_and_rotors, num_envs=1)
    act = _actuator(model_and_rotors, 1, 'rotor_speeds')
    hover = act.hover_speed_rad_s(MASS)
    command = torch.full((1, 4), hover - 50.0, dtype=torch.float64)
    command[0, list(faster)] = hover + 50.0
    act.command = command
    _fly(backend, act, 50)
    rate = backend.root_ang_vel_b[0]
    assert sign * rate[2] > 0.05
    assert rate[:2].abs().max() < 1e-9


def test_reset_only_touches_given_ids(model_and_rotors):
    """backend.reset([1, 3]) restores qpos0/zero velocity there and leaves envs 0 and 2 alone."""
    backend = _backend(model_and_rotors, num_envs=4)
    backend.qvel[:, 0] = torch.tensor([0.1, 0.2, 0.3, 0.4], dtype=torch.float64)
    backend.simulate(5, lambda dt: backend.ctrl.fill_(0.05))
    qpos_before, qvel_before = backend.qpos.clone(), backend.qvel.clone()
    backend.reset(torch.tensor([1, 3]))
    qpos0 = torch.tensor([0.0, 0, 0, 1, 0, 0, 0], dtype=torch.float64)
    for i in (1, 3):
        torch.testing.assert_close(backend.qpos[i], qpos0, rtol=0, atol=0)
        assert backend.qvel[i].abs().max() == 0.0
    for i in (0, 2):
        torch.testing.assert_close(backend.qpos[i], qpos_before[i], rtol=0, atol=0)
        torch.testing.assert_close(backend.qvel[i], qvel_before[i], rtol=0, atol=0)
        assert backend.qpos[i, 2] > 0.99


def test_torch_views_are_the_batch_memory(model_and_rotors):
    """write_root_state through the torch views is what Batch.get_data(i) shows (zero copy)."""
    backend = _backend(model_and_rotors, num_envs=3)
    ids = torch.tensor([2])
    backend.write_root_state(ids, torch.tensor([[0.1, 0.2, 0.3]]),
                             torch.tensor([[0.5, 0.5, 0.5, 0.5]]),
                             torch.tensor([[1.0, 2.0, 3.0]]), torch.tensor([[4.0, 5.0, 6.0]]))
    data = backend.batch.get_data(2)
    np.testing.assert_allclose(data.qpos, [0.1, 0.2, 0.3, 0.5, 0.5, 0.5, 0.5], rtol=1e-7)
    np.testing.assert_allclose(data.qvel, [1, 2, 3, 4, 5, 6])
    np.testing.assert_allclose(backend.batch.get_data(1).qpos, [0, 0, 1, 1, 0, 0, 0])
    assert np.shares_memory(backend.qpos.numpy(), backend.batch.bind('qpos'))
    backend.batch.bind('ctrl')[0, 3] = 0.125
    assert backend.ctrl[0, 3].item() == 0.125


def test_per_env_mass_changes_acceleration_as_f_over_m(model_and_rotors):
    """Same 0.4 N thrust: 0.027 kg climbs at 5.00481 m/s^2, 0.054 kg sinks at -2.40259 m/s^2."""
    backend = _backend(model_and_rotors, num_envs=2)
    mass = backend.expand('body_mass')
    mass[1, 1] = 0.054
    backend.set_const(torch.tensor([1]))
    assert backend.batch.get_model(0).body_mass[1] == 0.027
    assert backend.batch.get_model(1).body_mass[1] == 0.054
    backend.simulate(100, lambda dt: backend.ctrl.fill_(0.1))   # 4 x 0.1 N for 0.2 s
    accel = backend.root_lin_vel_w[:, 2] / 0.2
    # a = F / m - g: 0.4 / 0.027 - 9.81 = 5.004815; 0.4 / 0.054 - 9.81 = -2.402593
    np.testing.assert_allclose(accel.numpy(), [5.004815, -2.402593], rtol=0.01)


def test_set_const_runs_once_before_the_next_step(model_and_rotors):
    """Two events' set_const requests on overlapping sims: body_subtreemass follows the new
    masses at the next step (or copy_to_host), not before, and the sims left alone keep
    0.027 kg."""
    backend = _backend(model_and_rotors, num_envs=3)
    mass = backend.expand('body_mass')
    mass[1, 1], mass[2, 1] = 0.054, 0.081
    backend.set_const(torch.tensor([1]))
    backend.set_const(torch.tensor([1, 2]))
    assert backend.expand('body_subtreemass')[:, 1].tolist() == [0.027, 0.027, 0.027]
    model = backend.copy_to_host(2, mujoco.MjData(backend.model))
    assert model.body_subtreemass[1] == 0.081
    backend.simulate(1, lambda dt: None)
    assert backend.expand('body_subtreemass')[:, 1].tolist() == [0.027, 0.054, 0.081]


def test_recover_nonfinite_of_some_sims(model_and_rotors):
    """Restricted to env_ids, only those sims are checked and put back at qpos0; the mask is
    theirs, in their order."""
    backend = _backend(model_and_rotors, num_envs=4)
    backend.qvel[1, 4] = float('nan')
    backend.qpos[3, 0] = float('inf')
    finite = backend.recover_nonfinite(torch.tensor([3, 2]))
    assert finite.tolist() == [False, True]
    assert backend.qpos[3].tolist() == [0, 0, 0, 1, 0, 0, 0]
    assert torch.isnan(backend.qvel[1, 4])   # not among env_ids: untouched


def test_check_finite_flags_nan_state(model_and_rotors):
    """check_finite is False exactly for the env whose qvel holds a NaN."""
    backend = _backend(model_and_rotors, num_envs=3)
    backend.qvel[1, 4] = float('nan')
    assert backend.check_finite().tolist() == [True, False, True]
