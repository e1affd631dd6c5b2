"""Action integrators: hand-computed commands and the newest-first clipped history."""

import numpy as np
import pytest

from sim2real.contract import ActionSpec, Contract, ContractError
from sim2real.deploy.runtime.integrators import make_integrator
from sim2real.terms import COLLECTIVE_THRUST_FORMULA


def _contract(kind, size, params, default=(), rate_hz=50.0):
    """A minimal contract around one action spec."""
    names = [f'j{i}' for i in range(len(default))]
    return Contract(task='t', robot='r', urdf_sha256='', policy_rate_hz=rate_hz,
                    physics_rate_hz=200.0, joint_names=names,
                    default_joint_pos_rad=list(default), observations=[],
                    action=ActionSpec(kind, size, params=params))


QUAD = {'hover_thrust_n': 0.25, 'max_collective_thrust_n': 0.6, 'max_body_rate_rad_s': 6.0,
        'thrust_formula': COLLECTIVE_THRUST_FORMULA}


def test_thrust_body_rates_formula_and_clip():
    """a = (0.5, 0.1, -2, 0.5): thrust 0.25 + 0.5 (0.6 - 0.25) = 0.425 N, rates (0.6, -6,
    3) rad/s."""
    integrator = make_integrator(_contract('thrust_body_rates', 4, QUAD))
    command = integrator.step(np.array([0.5, 0.1, -2.0, 0.5]))
    np.testing.assert_allclose(command, [0.425, 0.6, -6.0, 3.0])


@pytest.mark.parametrize('a0, thrust_n', [(-3.0, 0.0), (-1.0, 0.0), (-0.5, 0.125), (0.0, 0.25),
                                          (1.0, 0.6), (3.0, 0.6)])
def test_thrust_spans_zero_hover_and_the_rotors_full_thrust(a0, thrust_n):
    """-1 (or below, clipped) -> 0 N; -0.5 -> 0.25 x 0.5; 0 -> hover 0.25 N; +1 (or above)
    -> the 0.6 N collective maximum."""
    integrator = make_integrator(_contract('thrust_body_rates', 4, QUAD))
    assert integrator.step(np.array([a0, 0.0, 0.0, 0.0]))[0] == pytest.approx(thrust_n)


def test_a_policy_trained_with_another_thrust_map_is_refused():
    """The map before the rotors' full thrust was reachable ('hover_thrust_n * (1 + a[0])')
    is refused by name rather than flown differently."""
    old = dict(QUAD, thrust_formula='hover_thrust_n * (1 + a[0])')
    with pytest.raises(ContractError, match=r'action\.params\.thrust_formula'):
        make_integrator(_contract('thrust_body_rates', 4, old))


def test_history_is_newest_first_and_zero_after_reset():
    """History of 3 after outputs 0.1, 0.2, 0.3 (then 2.0 clipped to 1): rows 1, .3, .2."""
    integrator = make_integrator(_contract('thrust_body_rates', 4, QUAD), history_length=3)
    for value in (0.1, 0.2, 0.3, 2.0):
        integrator.step(np.full(4, value))
    np.testing.assert_allclose(integrator.history[:, 0], [1.0, 0.3, 0.2])
    integrator.reset()
    assert not integrator.history.any()


def test_rotor_speeds_map_minus_one_to_min_and_one_to_max():
    """min 100, max 2100 rad/s: a = (-1, 0, 1, 0.5) -> (100, 1100, 2100, 1600)."""
    integrator = make_integrator(_contract('rotor_speeds', 4, {
        'min_speed_rad_s': 100.0, 'max_speed_rad_s': 2100.0}))
    np.testing.assert_allclose(integrator.step(np.array([-1.0, 0.0, 1.0, 0.5])),
                               [100.0, 1100.0, 2100.0, 1600.0])


def test_joint_offset_holds_default_plus_scaled_action():
    """q0 = (0.1, -0.2), scale 0.5, a = (0.4, -1): q* = (0.3, -0.7), twice in a row."""
    integrator = make_integrator(_contract('joint_position_offset', 2, {'scale': 0.5},
                                           default=(0.1, -0.2)))
    integrator.reset(np.array([1.0, 1.0]))
    for _ in range(2):
        np.testing.assert_allclose(integrator.step(np.array([0.4, -1.0])), [0.3, -0.7])


def test_joint_delta_integrates_from_measured_q():
    """Seeded at q = (1, 2), scale 0.1, a = (1, -1) twice: (1.1, 1.9) then (1.2, 1.8)."""
    integrator = make_integrator(_contract('joint_position_delta', 2, {'scale': 0.1},
                                           default=(0.0, 0.0)))
    integrator.reset(np.array([1.0, 2.0]))
    np.testing.assert_allclose(integrator.step(np.array([1.0, -1.0])), [1.1, 1.9])
    np.testing.assert_allclose(integrator.step(np.array([1.0, -1.0])), [1.2, 1.8])


def test_joint_delta_clips_its_state_and_seed_to_the_trained_range():
    """Range (-0.5, 0.5) per joint, scale 0.2: a seed of (0.7, -0.1) starts at (0.5, -0.1);
    a = (1, -1) three times: (0.5, -0.3), (0.5, -0.5), (0.5, -0.5); then a = (-1, 1) leaves
    the bound at once: (0.3, -0.3) (the state never winds up past the range)."""
    integrator = make_integrator(_contract('joint_position_delta', 2, {
        'scale': 0.2, 'target_min_rad': [-0.5, -0.5], 'target_max_rad': [0.5, 0.5],
        'target_seed': 'measured_joint_pos_rad'}, default=(0.0, 0.0)))
    integrator.reset(np.array([0.7, -0.1]))
    np.testing.assert_allclose(integrator.target_rad, [0.5, -0.1])
    got = [integrator.step(np.array([1.0, -1.0])) for _ in range(3)]
    np.testing.assert_allclose(got, [[0.5, -0.3], [0.5, -0.5], [0.5, -0.5]])
    np.testing.assert_allclose(integrator.step(np.array([-1.0, 1.0])), [0.3, -0.3])


@pytest.mark.parametrize('params, field', [
    ({'target_seed': 'default_joint_pos_rad'}, 'target_seed'),
    ({'target_min_rad': [-1.0, -1.0]}, 'target_min_rad and target_max_rad'),
    ({'target_min_rad': [-1.0], 'target_max_rad': [1.0, 1.0]}, 'target_min_rad'),
])
def test_joint_delta_refuses_a_seeding_or_range_it_cannot_honour(params, field):
    """A seed this runtime does not implement, one bound without the other, or a bound of the
    wrong length: ContractError naming the field."""
    with pytest.raises(ContractError, match=field):
        make_integrator(_contract('joint_position_delta', 2, {'scale': 0.1, **params},
                                  default=(0.0, 0.0)))


def test_joint_ema_blends_toward_the_offset_target():
    """alpha 0.25, q0 0, scale 1, seeded at q = 1, a = -1: 0.25*-1 + 0.75*1 = 0.5, then 0.125."""
    integrator = make_integrator(_contract('joint_position_ema', 1, {
        'scale': 1.0, 'alpha': 0.25}, default=(0.0,)))
    integrator.reset(np.array([1.0]))
    assert integrator.step(np.array([-1.0]))[0] == pytest.approx(0.5)
    assert integrator.step(np.array([-1.0]))[0] == pytest.approx(0.125)


def test_joint_rate_capped_moves_at_most_rate_times_dt():
    """2 rad/s at 50 Hz = 0.04 rad per tick: from 0 toward 0.1 -> 0.04, 0.08, 0.1."""
    integrator = make_integrator(_contract('joint_position_rate_capped', 1, {
        'scale': 0.1, 'max_rate_rad_s': 2.0}, default=(0.0,)))
    integrator.reset(np.array([0.0]))
    got = [integrator.step(np.array([1.0]))[0] for _ in range(3)]
    np.testing.assert_allclose(got, [0.04, 0.08, 0.1])


def test_unknown_kind_is_named():
    """An action kind the runtime does not know raises ContractError naming action.kind."""
    with pytest.raises(ContractError, match='action.kind'):
        make_integrator(_contract('torques', 2, {}, default=(0.0, 0.0)))


def test_a_registered_kind_is_built_and_a_clash_refused(monkeypatch):
    """register_integrator adds a kind make_integrator builds; another class under a taken
    kind and a non-Integrator are refused."""
    from sim2real.deploy.runtime import integrators

    monkeypatch.setattr(integrators, 'INTEGRATORS', dict(integrators.INTEGRATORS))

    @integrators.register_integrator
    class Torques(integrators.Integrator):
        kind = 'torques'
        required = ('torque_scale_nm',)

        def command(self, a):
            return a * self.param('torque_scale_nm')
    integrator = make_integrator(_contract('torques', 2, {'torque_scale_nm': [2.0, 3.0]},
                                           default=(0.0, 0.0)))
    np.testing.assert_allclose(integrator.step(np.array([0.5, 9.0])), [1.0, 3.0])  # clip 1
    assert integrators.register_integrator(Torques) is Torques   # the same class again: no-op
    with pytest.raises(ValueError, match='already registered'):
        integrators.register_integrator(type('Other', (Torques,), {}))
    with pytest.raises(TypeError, match='not an Integrator'):
        integrators.register_integrator(dict)
