"""Reading an Isaac Lab rsl_rl run: the fixture is a real Isaac Lab 3.0 run of our quadruped
URDF (tests/interop/fixtures/make_isaaclab_run.py); edited copies of it are refused naming
the field."""

from pathlib import Path
import shutil

import pytest
import torch

from sim2real.interop.isaaclab_run import (
    IsaacLabRunError, read_run, resolve_joint_values)
from sim2real.sim.joint_robot import movable_joints
from tests.interop.fixture_run import edited_run, FIXTURE

ROOT = Path(__file__).resolve().parents[2]


def _urdf_joints() -> list[str]:
    """The revolute joints of urdf/quadruped.urdf in file order (Isaac Lab's Newton order)."""
    return list(movable_joints(ROOT / 'urdf' / 'quadruped.urdf'))


def test_the_recorded_run_reads_as_isaac_lab_trained_it():
    """200 Hz physics, decimation 4 (50 Hz), joint targets = default + 0.25 a, Kp 25 and Kd
    0.5 on every joint, the 7 policy terms of Isaac Lab's Go2 flat task in order without
    scale, clip or history, the newest checkpoint, and an actor whose input width (48) the
    checkpoint's first layer confirms."""
    run = read_run(FIXTURE)
    assert (run.physics_dt_s, run.decimation, run.policy_rate_hz) == (0.005, 4, 50.0)
    assert (run.action_scale, run.action_offset, run.use_default_offset) == (0.25, 0.0, True)
    assert run.stiffness == {'.*_joint': 25.0} and run.damping == {'.*_joint': 0.5}
    assert [(t.name, t.func.split(':')[1]) for t in run.observations] == [
        ('base_lin_vel', 'base_lin_vel'), ('base_ang_vel', 'base_ang_vel'),
        ('projected_gravity', 'projected_gravity'), ('velocity_commands', 'generated_commands'),
        ('joint_pos', 'joint_pos_rel'), ('joint_vel', 'joint_vel_rel'),
        ('actions', 'last_action')]
    assert all(t.scale is None and t.clip is None and t.history_length == 0
               for t in run.observations)
    assert run.observations[3].params == {'command_name': 'base_velocity'}
    assert run.checkpoint.name == 'model_1.pt' and Path(run.urdf).name == 'quadruped.urdf'
    assert run.actor['hidden_dims'] == [128, 128, 128] and run.actor['activation'] == 'elu'
    state = torch.load(run.checkpoint, weights_only=False)['actor_state_dict']
    assert tuple(state['mlp.0.weight'].shape) == (128, 48)


def test_the_default_pose_resolves_by_pattern_in_urdf_order():
    """Isaac Lab's Go2 pose patterns give our URDF's 12 joints hips +-0.1, thighs 0.8 front
    and 1.0 rear, calves -1.5; two patterns on one joint, or none without a default, are
    refused naming the joint."""
    run = read_run(FIXTURE)
    joints = _urdf_joints()
    assert len(joints) == 12
    assert resolve_joint_values(run.default_joint_pos, joints) == [
        0.1, 0.8, -1.5, -0.1, 0.8, -1.5, 0.1, 1.0, -1.5, -0.1, 1.0, -1.5]
    with pytest.raises(IsaacLabRunError, match='"FL_hip_joint" matches patterns'):
        resolve_joint_values({'FL_.*': 1.0, '.*_hip_joint': 0.0}, joints)
    with pytest.raises(IsaacLabRunError, match='no pattern matches joint "FR_hip_joint"'):
        resolve_joint_values({'FL_.*': 1.0}, joints)
    assert resolve_joint_values({'FL_.*': 1.0}, joints, default=0.0)[3] == 0.0


@pytest.mark.parametrize('old,new,match', [
    ('class_type: isaaclab.envs.mdp.actions.joint_actions:JointPositionAction',
     'class_type: isaaclab.envs.mdp.actions.joint_actions:JointVelocityAction',
     'actions.joint_pos.class_type'),
    ('decimation: 4\n', 'decimations: 4\n', 'no field decimation'),
    ('      delay_max_lag: 0\n', '      delay_max_lag: 2\n',
     'observations.policy.base_lin_vel.delay_max_lag'),
    ('texture_scale: !!python/tuple', 'texture_scale: !!python/object/apply:os.system',
     'only tuples and slices are read'),
])
def test_what_the_reader_cannot_take_is_refused_by_name(tmp_path, old, new, match):
    """A velocity action, a missing decimation, a delayed term, an arbitrary Python object in
    the dump: each refused naming the field (or the tag), nothing guessed."""
    with pytest.raises(IsaacLabRunError, match=match):
        read_run(edited_run(tmp_path, old, new))


def test_the_actuators_target_delay_is_read_in_policy_ticks(tmp_path):
    """The recorded run's DC motor has no delay: (0, 0). Isaac Lab's delayed PD at 1-6
    physics steps (decimation 4) rounds out to 0-2 ticks; ours states whole ticks."""
    assert read_run(FIXTURE).action_delay_ticks == (0, 0)
    motor = '        class_type: isaaclab.actuators.actuator_pd:DCMotor\n'
    isaac = edited_run(tmp_path / 'a', motor, motor.replace('DCMotor', 'DelayedPDActuator')
                       + '        min_delay: 1\n        max_delay: 6\n')
    assert read_run(isaac).action_delay_ticks == (0, 2)
    ours = edited_run(tmp_path / 'b', motor, motor.replace(
        'isaaclab.actuators.actuator_pd:DCMotor', 'sim2real.isaaclab.actuators:DelayedDCMotor')
        + '        min_delay_ticks: 0\n        max_delay_ticks: 1\n')
    assert read_run(ours).action_delay_ticks == (0, 1)


LINKED_ANG_VEL = """\
    base_ang_vel:
      func: sim2real.isaaclab.observation_link:LinkedTerm
      params:
        func: isaaclab.envs.mdp.observations:base_ang_vel
        func_params: {}
        noise_std: 0.2
        delay_ticks:
        - 0
        - 1
        jitter_prob: 0.3
        dropout_prob:
        - 0.0
        - 0.3
      modifiers: null
      noise: null
"""
ANG_VEL = """\
    base_ang_vel:
      func: isaaclab.envs.mdp.observations:base_ang_vel
      params: {}
      modifiers: null
      noise:
        func: isaaclab.utils.noise.noise_model:uniform_noise
        operation: add
        n_min: -0.2
        n_max: 0.2
"""


def test_linked_terms_read_as_their_function_with_the_links_delay(tmp_path):
    """A term of ours delivered with our observation delay, jitter and dropout
    (sim2real.isaaclab.observation_link) reads as the function it wraps, with its own
    (Gaussian, raw-unit) noise, and the run records the link; a linked term that also has
    Isaac Lab noise, or params that are not a link's, is refused naming the term."""
    assert read_run(FIXTURE).observation_link is None
    run = read_run(edited_run(tmp_path / 'a', ANG_VEL, LINKED_ANG_VEL))
    term = run.observations[1]
    assert (term.name, term.func, term.params, term.noise_std) == (
        'base_ang_vel', 'isaaclab.envs.mdp.observations:base_ang_vel', {}, 0.2)
    link = run.observation_link
    assert (link.delay_ticks, link.jitter_prob, link.dropout_prob) == ((0, 1), 0.3, (0.0, 0.3))
    noised = LINKED_ANG_VEL.replace('      noise: null\n', ANG_VEL.split('modifiers: null\n')[1])
    with pytest.raises(IsaacLabRunError, match='base_ang_vel.noise: a linked term noises'):
        read_run(edited_run(tmp_path / 'b', ANG_VEL, noised))
    with pytest.raises(IsaacLabRunError, match='base_ang_vel.params: not those of a linked'):
        read_run(edited_run(tmp_path / 'c', ANG_VEL,
                            LINKED_ANG_VEL.replace('        jitter_prob: 0.3\n', '')))


def test_a_run_without_a_checkpoint_is_refused(tmp_path):
    """No model_<iteration>.pt: refused naming the directory."""
    run = tmp_path / 'run'
    shutil.copytree(FIXTURE, run)
    (run / 'model_1.pt').unlink()
    with pytest.raises(IsaacLabRunError, match='no model_<iteration>.pt'):
        read_run(run)
