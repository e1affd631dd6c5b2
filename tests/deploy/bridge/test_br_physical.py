"""The simulated robot's true mass, set away from nominal by the bridge parameters
base_mass_scale and base_payload_kg (deploy/bridge/physical.py)."""

import mujoco
import pytest

from sim2real.deploy.bridge import physical
from sim2real.deploy.bridge.params import declared_parameters
from sim2real.deploy.robots.quadrotor.bridge import make_sim


class _Twin:
    """A simulation holding only a model (what apply reads)."""

    def __init__(self, model):
        self.model = model


FIXED_ARM = mujoco.MjModel.from_xml_string(
    '<mujoco><worldbody><body name="link"><joint type="hinge"/>'
    '<geom size="0.1" mass="1"/></body></worldbody></mujoco>')


def test_the_quadrotor_weighs_one_and_a_half_times_its_mass_and_the_model_knows_it():
    """0.027 kg x 1.5 = 0.0405 kg, inertia x 1.5, the subtree mass recomputed; the twin's
    hover thrust follows at its next reset (0.0405 x 9.81 = 0.3973 N)."""
    p = {**declared_parameters('quadrotor'), 'base_mass_scale': 1.5}
    sim = make_sim(p)
    inertia = sim.model.body('base_link').inertia.copy()
    assert physical.apply(sim, p) == {'body': 'base_link', 'nominal_mass_kg': 0.027,
                                      'true_mass_kg': pytest.approx(0.0405)}
    body = sim.model.body('base_link')
    assert body.inertia == pytest.approx(1.5 * inertia)
    assert sim.model.body_subtreemass[body.id] == pytest.approx(0.0405)
    sim.reset()
    assert sim.hover_thrust_n == pytest.approx(0.0405 * 9.81)


def test_a_payload_is_a_point_mass_at_the_centre_of_mass():
    """+6 kg on the quadrotor's body: mass 6.027 kg, inertia unchanged."""
    p = {**declared_parameters('quadrotor'), 'base_payload_kg': 6.0}
    sim = make_sim(p)
    inertia = sim.model.body('base_link').inertia.copy()
    assert physical.apply(sim, p)['true_mass_kg'] == pytest.approx(6.027)
    assert sim.model.body('base_link').inertia == pytest.approx(inertia)


def test_a_fixed_base_robot_runs_at_the_defaults_and_refuses_a_change():
    """A model without a free joint: the defaults touch nothing and record nothing; a
    change is refused naming both parameters."""
    p = {**declared_parameters('quadrotor'), 'robot': 'arm'}
    assert physical.apply(_Twin(FIXED_ARM), p) == {}
    with pytest.raises(ValueError, match='base_mass_scale / base_payload_kg: the arm twin '
                                         'has no floating body'):
        physical.apply(_Twin(FIXED_ARM), {**p, 'base_payload_kg': 1.0})


@pytest.mark.parametrize('name, value', [('base_mass_scale', 0.0),
                                         ('base_mass_scale', float('inf')),
                                         ('base_payload_kg', -1.0)])
def test_checks_refuse_impossible_masses(name, value):
    """A zero or infinite scale and a negative payload are named."""
    p = {**declared_parameters('quadrotor'), name: value}
    failed = [n for n, ok, _ in physical.checks(p) if not ok]
    assert failed == [name]
