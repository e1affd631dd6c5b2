"""`sim2real import-isaaclab`: a real Isaac Lab 3.0 run of our quadruped URDF (the fixture)
becomes a policy.onnx of quadruped-flat whose graph is the run's actor, evaluated in our
MuJoCo env and loaded by our deploy runtime; what does not match our robot is refused naming
the item."""

import math
import random
from pathlib import Path

import numpy as np
import pytest
import torch

from sim2real.export.onnx_policy import INPUT_NAME, onnx_session, OUTPUT_NAME
from sim2real.interop.isaaclab_import import import_isaaclab_run, urdf_joint_order
from sim2real.interop.isaaclab_run import IsaacLabRunError
from tests.interop.fixture_run import edited_run, feed_standing, FIXTURE

ROOT = Path(__file__).resolve().parents[2]
URDF = ROOT / 'urdf' / 'quadruped.urdf'
TASK = 'quadruped-flat'
# Isaac Lab's Go2 flat terms: base lin vel 3, ang vel 3, gravity 3, command 3, joint pos 12,
# joint vel 12, last action 12 = 48
LAYOUT = [('lin_vel_b', 3), ('ang_vel_b', 3), ('projected_gravity', 3),
          ('velocity_command', 3), ('joint_pos_rel', 12), ('joint_vel', 12),
          ('action_history', 12)]
JOINT_SLICES = (slice(12, 24), slice(24, 36), slice(36, 48))


def _run_actor(obs: torch.Tensor) -> torch.Tensor:
    """The run's actor written out by hand from its checkpoint: 48 -> 128 -> 128 -> 128 -> 12,
    ELU between (agent.yaml), no normalizer, inputs and outputs in the run's joint order."""
    state = torch.load(FIXTURE / 'model_1.pt', weights_only=False)['actor_state_dict']
    x = obs
    for i in (0, 2, 4, 6):
        x = x @ state[f'mlp.{i}.weight'].T + state[f'mlp.{i}.bias']
        if i < 6:
            x = torch.nn.functional.elu(x)
    return x


@pytest.fixture(scope='module')
def imported(tmp_path_factory):
    """The fixture imported with its URDF where this checkout has it."""
    out = tmp_path_factory.mktemp('import') / 'policy.onnx'
    return import_isaaclab_run(FIXTURE, TASK, out=out, urdf=URDF)


def test_the_contract_is_our_robots_with_isaac_labs_observations(imported):
    """Task quadruped-flat, our URDF and rates (50 Hz policy, 200 Hz physics), the 48 inputs
    in Isaac Lab's order under our names, Isaac Lab's uniform noise as a standard deviation
    (lin vel U(+-0.1) -> 0.1 / sqrt 3), the run's joint order (the URDF's) recorded."""
    contract = imported.contract
    assert contract.task == 'quadruped-flat' and contract.robot == 'go2class'
    assert (contract.policy_rate_hz, contract.physics_rate_hz) == (50.0, 200.0)
    assert [(t.name, t.size) for t in contract.observations] == LAYOUT
    assert contract.observation_size == 48
    noise = {t.name: t.noise_std for t in contract.observations}
    assert noise['lin_vel_b'] == pytest.approx(0.1 / math.sqrt(3))
    assert noise['joint_vel'] == pytest.approx(1.5 / math.sqrt(3))
    assert noise['velocity_command'] == 0.0
    assert contract.robot_params['imported_from'] == 'isaaclab'
    assert contract.action.params['delay_ticks_trained'] == [0, 0]   # ours trains with 0-1
    assert contract.robot_params['observation_delay_ticks_trained'] == [0, 0]
    assert 'observation_dropout_prob_trained' not in contract.robot_params
    assert contract.robot_params['isaaclab_joint_order'] == urdf_joint_order(URDF)
    assert imported.max_abs_diff < 1e-5


def test_a_linked_runs_delay_jitter_and_dropout_go_into_the_contract(tmp_path):
    """A run whose policy terms went through our observation link (sim2real.isaaclab) records
    its delay, jitter and dropout as trained; the plain run records none (above: [0, 0])."""
    from tests.interop.test_isaaclab_run import ANG_VEL, LINKED_ANG_VEL
    run = edited_run(tmp_path, ANG_VEL, LINKED_ANG_VEL)
    result = import_isaaclab_run(run, TASK, out=tmp_path / 'p.onnx', urdf=URDF)
    params = result.contract.robot_params
    assert params['observation_delay_ticks_trained'] == [0, 1]
    assert params['observation_jitter_prob_trained'] == 0.3
    assert params['observation_dropout_prob_trained'] == [0.0, 0.3]


def test_the_file_computes_the_runs_actor(imported):
    """onnxruntime on 200 random observations equals the checkpoint's actor written out by
    hand, within 1e-5."""
    obs = 2.0 * torch.randn(200, 48, generator=torch.Generator().manual_seed(0))
    got = onnx_session(imported.path).run([OUTPUT_NAME], {INPUT_NAME: obs.numpy()})[0]
    np.testing.assert_allclose(got, _run_actor(obs).numpy(), atol=1e-5)


def test_another_articulation_order_is_gathered_in_and_put_back(tmp_path):
    """Told the run's joints came in a shuffled order, the file reads our order: our inputs
    permuted into the run's order give the run's actions, which come back in our order."""
    ours = urdf_joint_order(URDF)
    theirs = ours[:]
    random.Random(4).shuffle(theirs)
    result = import_isaaclab_run(FIXTURE, TASK, out=tmp_path / 'p.onnx', joint_order=theirs)
    obs_ours = torch.randn(50, 48, generator=torch.Generator().manual_seed(1))
    obs_theirs = obs_ours.clone()
    perm = [ours.index(j) for j in theirs]   # their joint k is our joint perm[k]
    for part in JOINT_SLICES:
        obs_theirs[:, part] = obs_ours[:, part][:, perm]
    act_theirs = _run_actor(obs_theirs)
    expected = act_theirs[:, [theirs.index(j) for j in ours]]
    got = onnx_session(result.path).run([OUTPUT_NAME], {INPUT_NAME: obs_ours.numpy()})[0]
    np.testing.assert_allclose(got, expected.numpy(), atol=1e-5)
    assert result.contract.joint_names == ours


def test_our_eval_runs_the_imported_file(imported):
    """`sim2real eval` builds quadruped-flat with the file's observation layout (the base
    velocity from the simulator) and judges it: an untrained 1-iteration policy fails the
    tracking floor with a verdict, not an error."""
    from sim2real.evaluate import evaluate
    result = evaluate(imported.path, episodes=2)
    assert result['task'] == 'quadruped-flat' and result['episodes'] == 2
    assert result['verdict']['passed'] is False
    assert result['lin_vel_error_mps'] > 0.1


def test_our_deploy_runtime_runs_the_imported_file(imported):
    """config/quadruped.yaml loads the file; lin_vel_b comes from the Pinocchio leg odometry
    (the robot has no velocity sensor), and a tick yields 12 finite targets."""
    from sim2real.deploy.runtime import Runtime
    from sim2real.deploy.runtime.parts import LegOdometryPart
    runtime = Runtime.from_files(imported.path, ROOT / 'config' / 'quadruped.yaml')
    part = runtime.profile.part(LegOdometryPart)
    assert part.observes_velocity and part.odometry is not None
    inputs = runtime.profile.observation_inputs(runtime.store, feed_standing(runtime))
    np.testing.assert_allclose(inputs['lin_vel_b'], np.zeros(3), atol=1e-9)


@pytest.mark.parametrize('old,new,match', [
    ('func: isaaclab.envs.mdp.observations:joint_vel_rel',
     'func: isaaclab.envs.mdp.observations:joint_effort',
     r'observations.policy.joint_vel: Isaac Lab term .*joint_effort has no counterpart'),
    ('decimation: 4\n', 'decimation: 2\n', r'decimation 2 \(100 Hz policy\).*50 Hz'),
    ('.*_calf_joint: -1.5', '.*_calf_joint: -1.4',
     r'init_state.joint_pos of joint "FL_calf_joint": -1.4 in the run, -1.5'),
    ('stiffness: 25.0', 'stiffness: 20.0', r'stiffness of joint "FL_hip_joint": 20'),
    ('    scale: 0.25\n', '    scale: 0.5\n', r'actions scale 0.5.*0.25'),
])
def test_what_does_not_match_our_robot_is_refused_by_name(tmp_path, old, new, match):
    """An observation term we do not compute, another decimation, default pose, gain or
    action scale: IsaacLabRunError naming the item, and no file written."""
    run = edited_run(tmp_path, old, new)
    with pytest.raises(IsaacLabRunError, match=match):
        import_isaaclab_run(run, TASK, out=tmp_path / 'p.onnx', urdf=URDF)
    assert not (tmp_path / 'p.onnx').exists()


def test_joints_that_do_not_match_and_an_unknown_order_are_refused(tmp_path):
    """A run joint our robot lacks and one of ours the run lacks are named; without the
    URDF the run spawned (another machine's path) the order must be given."""
    order = urdf_joint_order(URDF)
    with pytest.raises(IsaacLabRunError, match='joint "FL_knee_joint" of the run'):
        import_isaaclab_run(FIXTURE, TASK, out=tmp_path / 'p.onnx',
                            joint_order=['FL_knee_joint'] + order[1:])
    with pytest.raises(IsaacLabRunError, match='joint "RR_calf_joint" of our robot'):
        import_isaaclab_run(FIXTURE, TASK, out=tmp_path / 'p.onnx', joint_order=order[:-1])
    run = edited_run(tmp_path, 'asset_path: ', 'asset_path: /elsewhere')
    with pytest.raises(IsaacLabRunError, match='give the joint order'):
        import_isaaclab_run(run, TASK, out=tmp_path / 'p.onnx')
    assert not (tmp_path / 'p.onnx').exists()


def test_the_command_line_imports_and_refuses(tmp_path, capsys):
    """`sim2real import-isaaclab RUN --task T --urdf U --out F` prints the file, task, layout and
    order as JSON (exit 0); a run with another decimation exits 2 naming it."""
    import json
    from sim2real.cli.main import main
    out = tmp_path / 'go2.onnx'
    assert main(['import-isaaclab', str(FIXTURE), '--task', TASK, '--urdf', str(URDF),
                 '--out', str(out), '--json']) == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert printed['onnx'] == str(out) and out.is_file()
    assert printed['task'] == 'quadruped-flat' and printed['checkpoint'] == 'model_1.pt'
    assert printed['observations'] == [name for name, _ in LAYOUT]
    run = edited_run(tmp_path, 'decimation: 4\n', 'decimation: 8\n')
    assert main(['import-isaaclab', str(run), '--task', TASK, '--urdf', str(URDF)]) == 2
    assert not (run / 'policy.onnx').exists()
