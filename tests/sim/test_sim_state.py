"""The state protocol (sim2real/sim/state.py) and the mujoco backend's full simulation state."""

import mujoco
import numpy as np
import pytest
import torch

from sim2real.sim.backends import make_backend
from sim2real.sim.mjcf import quadrotor_model
from sim2real.sim.state import Stateful, StateError


class Part(Stateful):
    """A toy component: two state arrays, a generator, a counter, a view, a constant."""

    STATE = ('speed', 'timers', 'rng', 'ticks')
    NOT_STATE = ('speed_head', 'gain')

    def __init__(self):
        self.speed = torch.zeros(3, 2)
        self.speed_head = self.speed[:, 0]   # a view of speed
        self.timers = {'push': torch.zeros(3)}
        self.rng = torch.Generator().manual_seed(0)
        self.ticks = 0
        self.gain = torch.ones(2)


def test_round_trip_copies_in_place_and_keeps_views():
    """A loaded state equals the saved one, arrays are written in place (views follow), and
    the saved state does not change when the component moves on."""
    part = Part()
    part.speed += 2.0
    part.timers['push'][1] = 0.5
    part.ticks = 7
    torch.rand(4, generator=part.rng)
    state = part.state_dict()
    part.speed += 1.0   # the saved copy must not see this
    draws = torch.rand(4, generator=part.rng)
    other = Part()
    other.load_state_dict(state)
    assert torch.equal(other.speed, torch.full((3, 2), 2.0))
    assert torch.equal(other.speed_head, torch.full((3,), 2.0))   # the view follows
    assert other.timers['push'].tolist() == [0.0, 0.5, 0.0]
    assert other.ticks == 7
    assert torch.equal(torch.rand(4, generator=other.rng), draws)


def test_undeclared_array_attribute_is_refused_by_name():
    """An array attribute in none of STATE, CHILDREN, NOT_STATE fails the save, naming it."""
    part = Part()
    part.motor_temperature = torch.zeros(3)
    with pytest.raises(StateError, match=r'Part\.motor_temperature'):
        part.state_dict()


def test_component_without_protocol_is_refused_by_name():
    """A child without state_dict() fails the save, naming the attribute and its class."""
    class Holder(Stateful):
        CHILDREN = ('parts',)

        def __init__(self):
            self.parts = {'left': Part(), 'right': object()}

    with pytest.raises(StateError, match=r"Holder\.parts\['right'\] \(object\)"):
        Holder().state_dict()


@pytest.mark.parametrize('damage, message', [
    (lambda s: s.pop('ticks'), r"Part: the state lacks \['ticks'\]"),
    (lambda s: s.update(extra=1), r"unexpected entries \['extra'\]"),
    (lambda s: s.update(speed=torch.zeros(4, 2)), r'Part\.speed: the state holds shape \(4, 2\)'),
    (lambda s: s.update(speed=torch.zeros(3, 2, dtype=torch.float64)), r'Part\.speed: .*float64'),
])
def test_state_that_does_not_fit_is_refused_naming_the_entry(damage, message):
    """Missing, unexpected, reshaped or retyped entries raise StateError naming them."""
    state = Part().state_dict()
    damage(state)
    with pytest.raises(StateError, match=message):
        Part().load_state_dict(state)


@pytest.fixture(scope='module')
def model(quad_urdf):
    """The quadrotor model at 200 Hz."""
    return quadrotor_model(quad_urdf, 0.005)[0]


def _fly(backend, steps: int, max_thrust_n: float = 0.12) -> None:
    """Uneven rotor thrusts and a side force: every simulation spins and drifts."""
    n = backend.num_envs
    backend.ctrl[:] = torch.linspace(0.02, max_thrust_n, 4 * n,
                                     dtype=torch.float64).reshape(n, 4)
    backend.xfrc_applied[:, 1, 0] = 0.01
    backend.simulate(steps, lambda dt: None)


def test_mujoco_state_is_mj_getState_integration_of_every_simulation(model):
    """The saved integration state of simulation i equals mj_getState(mjSTATE_INTEGRATION)
    of its MjData: time, qpos, qvel, act, warm start, ctrl, applied forces..."""
    backend = make_backend(model, 3, num_threads=1)
    backend.reset(torch.arange(3))
    backend.qpos[:, 2] = 1.0
    _fly(backend, 7)
    state = backend.state_dict()['integration_state']
    spec = mujoco.mjtState.mjSTATE_INTEGRATION
    row = np.empty(mujoco.mj_stateSize(model, spec))
    for i in range(3):
        data = mujoco.MjData(model)
        sim_model = backend.copy_to_host(i, data)
        mujoco.mj_getState(sim_model, data, row, spec)
        assert np.array_equal(state[i].numpy(), row), i
    assert float(state[0, 0]) == pytest.approx(7 * 0.005)   # time


def test_mujoco_backend_round_trip_with_randomized_masses_is_bitwise(model):
    """Saved simulations with per-simulation masses, scraping along the ground, continue
    bit-identically in a fresh backend; a zeroed warm start (in the state) would have
    changed the result."""
    backend = make_backend(model, 4, num_threads=1)
    backend.reset(torch.arange(4))
    backend.qpos[:, 2] = 0.02
    backend.expand('body_mass')[:, 1] *= torch.tensor([0.8, 0.9, 1.1, 1.2], dtype=torch.float64)
    backend.set_const()
    _fly(backend, 30, max_thrust_n=0.05)
    state = backend.state_dict()
    assert set(state['model_fields']) >= {'body_mass', 'body_subtreemass'}
    _fly(backend, 20, max_thrust_n=0.05)

    def continued(state) -> torch.Tensor:
        fresh = make_backend(model, 4, num_threads=1)
        fresh.load_state_dict(state)
        _fly(fresh, 20, max_thrust_n=0.05)
        return fresh.qpos.clone()

    assert torch.equal(continued(state), backend.qpos)
    spec = mujoco.mjtState
    start = sum(mujoco.mj_stateSize(model, s) for s in (
        spec.mjSTATE_TIME, spec.mjSTATE_QPOS, spec.mjSTATE_QVEL, spec.mjSTATE_ACT,
        spec.mjSTATE_HISTORY))
    cold = dict(state, integration_state=state['integration_state'].clone())
    cold['integration_state'][:, start:start + model.nv] = 0.0
    assert not torch.equal(continued(cold), backend.qpos)


def test_mujoco_state_of_another_backend_is_refused(model):
    """A state saved by another backend kind or batch size is refused with its reason."""
    backend = make_backend(model, 2, num_threads=1)
    state = backend.state_dict()
    with pytest.raises(StateError, match='"mjwarp" backend'):
        backend.load_state_dict(dict(state, backend='mjwarp'))
    with pytest.raises(StateError, match=r'integration_state: the state holds shape \(2, '):
        make_backend(model, 3, num_threads=1).load_state_dict(state)
