"""The mjwarp backend (MuJoCo Warp on Warp's CPU device) on its own: views, resets,
per-world model fields. Cross-backend agreement of whole tasks: tests/tasks/test_cross_backend.py.
"""

import math

import pytest
import torch

from sim2real.sim.backends import make_backend
from sim2real.sim.mjcf import quadrotor_model

G = 9.81
DT = 0.002


@pytest.fixture(scope='module')
def model(quad_urdf):
    """The quadrotor model at 500 Hz (a free body with four rotor actuators)."""
    return quadrotor_model(quad_urdf, DT)[0]


def _levitate(backend, height_m=1.0):
    """Every world at rest, level, at height_m."""
    n = backend.num_envs
    ids = torch.arange(n)
    backend.reset(ids)
    backend.write_root_state(ids, torch.tensor([[0.0, 0.0, height_m]]).repeat(n, 1),
                             torch.tensor([[1.0, 0.0, 0.0, 0.0]]).repeat(n, 1),
                             torch.zeros(n, 3), torch.zeros(n, 3))


def test_views_are_float32_live_memory(model):
    """Writing a torch view changes the simulation; stepping changes the views."""
    backend = make_backend(model, 3, 'mjwarp')
    assert backend.name == 'mjwarp' and backend.qpos.dtype == torch.float32
    assert backend.qpos.shape == (3, 7) and backend.xfrc_applied.shape == (3, model.nbody, 6)
    _levitate(backend)
    backend.qvel[1, 2] = 2.0   # world 1 thrown upwards at 2 m/s
    backend.simulate(50, lambda dt: None)   # 0.1 s, rotors off
    t = 50 * DT
    z = backend.root_pos_w[:, 2]
    # semi-implicit Euler: z = z0 + v t - g t^2 / 2 up to one step's g dt t / 2
    assert z[0].item() == pytest.approx(1.0 - 0.5 * G * t * t, abs=G * DT * t)
    assert z[1].item() == pytest.approx(1.0 + 2.0 * t - 0.5 * G * t * t, abs=G * DT * t)


def test_reset_touches_only_the_given_worlds(model):
    """reset(ids) puts those worlds back at qpos0 and leaves the others where they are."""
    backend = make_backend(model, 3, 'mjwarp')
    _levitate(backend, height_m=2.0)
    backend.reset(torch.tensor([1]))
    assert backend.qpos[1].tolist() == pytest.approx(model.qpos0.tolist())
    assert backend.qpos[0, 2].item() == 2.0 and backend.qpos[2, 2].item() == 2.0


def test_per_world_mass_after_set_const(model):
    """A body force equal to the nominal weight holds world 0 and lets a 2x heavier world 1
    fall at g/2: the per-world mass reaches the dynamics through set_const."""
    backend = make_backend(model, 2, 'mjwarp')
    mass = backend.expand('body_mass')
    assert mass.shape == (2, model.nbody)
    mass[1, 1] = 2.0 * model.body_mass[1]
    backend.set_const()
    _levitate(backend)
    weight_n = model.body_mass[1] * G

    def hold(dt_s):
        backend.xfrc_applied[:, 1, 2] = weight_n
    steps = 100
    backend.simulate(steps, hold)
    t = steps * DT
    z = backend.root_pos_w[:, 2]
    assert z[0].item() == pytest.approx(1.0, abs=1e-5)
    assert z[1].item() == pytest.approx(1.0 - 0.25 * G * t * t, abs=0.5 * G * DT * t)
    assert backend.expand('body_mass') is mass   # the same view on the next call


def test_expand_refuses_fields_that_cannot_vary(model):
    """A field MuJoCo Warp shares across worlds gets a clear error, not a silent copy."""
    backend = make_backend(model, 2, 'mjwarp')
    with pytest.raises(ValueError, match='cannot vary per world'):
        backend.expand('body_parentid')


def test_unknown_backend_and_cpu_only_mujoco(model):
    """Typos and impossible device requests fail with the list of choices."""
    with pytest.raises(ValueError, match='expected one of'):
        make_backend(model, 1, 'mjwrap')
    with pytest.raises(ValueError, match='runs on the CPU'):
        make_backend(model, 1, 'mujoco', device='cuda')


def test_rotor_thrust_hovers_both_backends(model):
    """Four rotors at the hover thrust hold the drone in both backends alike."""
    z = {}
    for name in ('mujoco', 'mjwarp'):
        backend = make_backend(model, 1, name)
        _levitate(backend)
        thrust = model.body_mass[1] * G / 4.0

        def rotors(dt_s):
            backend.ctrl[:] = thrust
        backend.simulate(200, rotors)
        z[name] = backend.root_pos_w[0, 2].item()
    assert z['mujoco'] == pytest.approx(1.0, abs=1e-4)
    assert z['mjwarp'] == pytest.approx(z['mujoco'], abs=1e-5)
    assert not math.isnan(z['mjwarp'])


def test_copy_to_host_for_rendering(model):
    """copy_to_host puts a world's state into an MjData: after mj_forward the body sits where
    the backend's qpos says (what `eval --video` renders)."""
    import mujoco
    backend = make_backend(model, 2, 'mjwarp')
    _levitate(backend, height_m=1.5)
    backend.qpos[1, 0] = 0.25
    data = mujoco.MjData(model)
    host_model = backend.copy_to_host(1, data)
    mujoco.mj_forward(host_model, data)
    assert data.xpos[1].tolist() == pytest.approx([0.25, 0.0, 1.5], abs=1e-6)
