"""Variants of the simulated robot (deploy/bridge/variant.py): each robot's randomization box
by its own names, set on the real twin as the training sets it, delays held back by the
bridge, and every name, value or parameter the twin cannot take refused with the reason."""

from __future__ import annotations

import json
import pytest

from sim2real.deploy.bridge import variant
from sim2real.deploy.bridge.command_delay import CommandDelay
from sim2real.deploy.bridge.params import bridge_of, declared_parameters, fault_cfg, validate


def _params(robot: str, values: dict, tick_s: float = 0.01, substep_s: float = 0.005) -> dict:
    """The robot's bridge parameters with a variant and the policy's timing."""
    return {**declared_parameters(robot), 'variant': json.dumps(values),
            'policy_tick_s': tick_s, 'policy_substep_s': substep_s}


def _twin(robot: str, values: dict, **timing):
    """A fresh twin of the robot with the variant set; (sim, nominal sim, parameters)."""
    p = _params(robot, values, **timing)
    bridge = bridge_of(robot)
    sim, nominal = bridge.make_sim(p), bridge.make_sim(p)
    assert variant.apply(sim, p, bridge.variant()) == values
    return sim, nominal, p


def _box_names(robot: str) -> set[str]:
    """The names `sim2real robustness` reports for the robot's tasks."""
    if robot == 'quadrotor':
        from tasks.quadrotor.cfg import randomization_box
        return set(randomization_box())
    if robot == 'quadruped':
        from tasks.quadruped.cfg import randomization_box
        return set(randomization_box())
    from tasks.hand.cfg import randomization_box
    from tasks.hand.reorient_cfg import reorient_randomization_box
    return set(randomization_box()) | set(reorient_randomization_box())


@pytest.mark.parametrize('robot', ['quadrotor', 'quadruped', 'hand'])
def test_every_box_parameter_has_a_knob_by_its_own_name(robot):
    """The twin's knobs are exactly the training box's names (modelled or saying why not)."""
    knobs = bridge_of(robot).variant()
    assert set(knobs) == _box_names(robot)
    for name, knob in knobs.items():
        assert bool(knob.unmodelled) != bool(knob.set or knob.effect), name


def test_the_quadrotor_variant_sets_mass_inertia_thrust_and_motor_lag():
    """mass x1.5 (0.027 -> 0.0405 kg), inertia x1.3, thrust coefficient x0.7 on all four
    rotors, motor time constant 0.1 -> 0.16 s; the subtree mass follows."""
    values = {'mass_scale': 1.5, 'inertia_scale': 1.3, 'thrust_scale': 0.7,
              'motor_tau_scale': 1.6}
    sim, nominal, _ = _twin('quadrotor', values)
    body = sim.model.body('base_link')
    assert body.mass[0] == pytest.approx(0.0405)
    assert sim.model.body_subtreemass[body.id] == pytest.approx(0.0405)
    assert body.inertia == pytest.approx(1.3 * nominal.model.body('base_link').inertia)
    assert sim.actuator.thrust_scale.tolist() == [[0.7] * 4]
    assert sim.actuator.time_constant_s.ravel().tolist() == pytest.approx([0.16])
    sim.reset()
    assert sim.hover_thrust_n == pytest.approx(0.0405 * 9.81)


def test_the_quadruped_variant_sets_payload_links_gains_strength_and_friction():
    """+6 kg on the trunk, leg links x1.2, Kp x0.8, Kd x1.5, strength x1.3 (the ctrl and
    joint force ranges widen x1.3), foot friction 0.4 on all four feet."""
    values = {'payload_kg': 6.0, 'link_mass_scale': 1.2, 'kp_scale': 0.8, 'kd_scale': 1.5,
              'motor_strength': 1.3, 'foot_friction': 0.4}
    sim, nominal, _ = _twin('quadruped', values)
    base = sim.info.base_body_id
    assert sim.model.body_mass[base] == pytest.approx(nominal.model.body_mass[base] + 6.0)
    links = [b for b in range(1, sim.model.nbody) if b != base]
    assert sim.model.body_mass[links] == pytest.approx(1.2 * nominal.model.body_mass[links])
    actuator = sim.driver.actuator
    assert (actuator.kp_scale == 0.8).all() and (actuator.kd_scale == 1.5).all()
    assert (actuator.strength == 1.3).all()
    ids = sim.info.actuator_ids
    assert sim.model.actuator_ctrlrange[ids] == pytest.approx(
        1.3 * nominal.model.actuator_ctrlrange[ids])
    assert sim.model.geom_friction[sim.info.foot_geom_ids, 0].tolist() == [0.4] * 4


def test_a_payload_that_leaves_no_trunk_is_refused():
    """-100 kg on a trunk of a few kg: refused, naming the mass it would leave."""
    p = _params('quadruped', {'payload_kg': -100.0})
    with pytest.raises(variant.VariantError, match='payload_kg=-100: leaves the trunk'):
        variant.apply(bridge_of('quadruped').make_sim(p), p, bridge_of('quadruped').variant())


def test_the_hand_variant_sets_the_cube_and_the_motors():
    """Cube mass and inertia x2, cube friction 0.6, fingertip friction 1.1, torque limit
    x0.6 as the motors' strength."""
    values = {'cube_mass': 2.0, 'cube_friction': 0.6, 'fingertip_friction': 1.1,
              'torque_limit': 0.6}
    sim, nominal, _ = _twin('hand', values)
    cube = sim.info.object_body_id
    assert sim.model.body_mass[cube] == pytest.approx(2 * nominal.model.body_mass[cube])
    assert sim.model.body_inertia[cube] == pytest.approx(2 * nominal.model.body_inertia[cube])
    assert sim.model.geom_friction[sim.info.object_geom_id, 0] == pytest.approx(0.6)
    assert sim.model.geom_friction[sim.info.fingertip_geom_ids, 0] == pytest.approx(1.1)
    assert (sim.driver.actuator.strength == 0.6).all()


def test_delays_are_counted_in_the_policys_ticks_and_physics_steps():
    """Hand at 20 Hz (50 ms ticks) on 200 Hz physics (5 ms): 2 ticks + 3 steps of action
    delay hold commands 115 ms; 1 tick of observation delay adds 50 ms to every stream's
    sensor latency."""
    p = _params('hand', {'action_delay_ticks': 2, 'action_lag_substeps': 3,
                         'observation_delay_ticks': 1}, tick_s=0.05, substep_s=0.005)
    assert variant.delays(p, bridge_of('hand').variant()) == {
        variant.COMMAND_DELAY: pytest.approx(0.115), variant.SENSOR_DELAY: pytest.approx(0.05)}
    assert fault_cfg(p).latency_s == pytest.approx(0.05)


def test_held_commands_are_applied_after_the_delay_in_order():
    """30 ms: commands at 0 and 10 ms apply at 30 and 40 ms, not before; a reset forgets
    what is held; no delay applies at once."""
    applied = []
    delay = CommandDelay(0.03)
    delay.offer(lambda t: applied.append(('a', t)), 0.0)
    delay.offer(lambda t: applied.append(('b', t)), 0.01)
    assert delay.release(0.029) == 0 and applied == []
    assert delay.release(0.03) == 1 and applied == [('a', 0.03)]
    assert delay.release(0.05) == 1 and applied == [('a', 0.03), ('b', 0.04)]
    delay.offer(lambda t: applied.append(('c', t)), 0.06)
    delay.clear()
    assert delay.release(1.0) == 0 and len(delay) == 0
    CommandDelay(0.0).offer(lambda t: applied.append(('now', t)), 0.5)
    assert applied[-1] == ('now', 0.5)
    with pytest.raises(ValueError, match='>= 0'):
        CommandDelay(-0.01)


@pytest.mark.parametrize('robot, values, message', [
    ('quadrotor', {'thrust_scal': 0.8}, 'did you mean "thrust_scale"'),
    ('quadruped', {'payload': 3}, 'did you mean "payload_kg"'),
    ('quadrotor', {'observation_dropout': 0.2}, 'does not model it: lost messages'),
    ('hand', {'cube_size': 1.2}, 'does not model it: a different cube'),
    ('quadrotor', {'mass_scale': 0}, 'mass_scale=0: must be a finite number > 0'),
    ('quadrotor', {'mass_scale': float('nan')}, 'mass_scale=nan: must be a finite number'),
    ('quadrotor', {'action_delay_ticks': 1.5}, 'must be a whole number'),
    ('quadruped', {'action_delay_ticks': -1}, 'must be a finite number >= 0'),
    ('quadrotor', {'mass_scale': 'heavy'}, "'heavy' is not a number"),
])
def test_a_variant_the_twin_cannot_take_is_refused_naming_why(robot, values, message):
    """Unknown names (with the closest), unmodelled parameters (with why) and values out of
    range are refused by the bridge's validation, before anything starts."""
    with pytest.raises(ValueError, match=message):
        validate(_params(robot, values))


def test_a_delay_in_ticks_needs_the_policys_period():
    """Without policy_tick_s (sim2real hil sets it from the contract) a tick count has no
    duration: refused, saying so."""
    with pytest.raises(ValueError, match='policy_tick_s'):
        validate(_params('quadrotor', {'action_delay_ticks': 2}, tick_s=0.0))


def test_a_variant_file_that_is_not_a_mapping_is_refused():
    """A list, or YAML that does not parse, is refused; an empty text is no variant."""
    assert variant.parse('  ') == {}
    with pytest.raises(variant.VariantError, match='expected a mapping'):
        variant.parse('- 1\n- 2\n')
    with pytest.raises(variant.VariantError, match='not YAML'):
        variant.parse('a: [1,\n')
    assert variant.parse('mass_scale: 1.5\naction_delay_ticks: 3\nthrust_scale: 9e-1\n') == {
        'mass_scale': 1.5, 'action_delay_ticks': 3.0, 'thrust_scale': 0.9}
    knobs = bridge_of('quadrotor').variant()
    with pytest.raises(variant.VariantError, match='mass_scale=nan: must be a finite'):
        variant.check(variant.parse('mass_scale: .nan'), knobs, 'quadrotor')
