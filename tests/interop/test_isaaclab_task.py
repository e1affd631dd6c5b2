"""Our quadruped task trained in Isaac Lab (`sim2real train quadruped-flat --backend
isaaclab`): the task file our side writes, and a real run it produced (the fixture
isaaclab_sim2real_quadruped_flat, 2 rsl_rl iterations of 16 envs in Isaac Lab 3.0) imported
with exactly our task's contract: same terms, scales, noise and history, the history put
back newest first inside the graph."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from sim2real.contract import file_sha256, ObservationTermSpec
from sim2real.export.onnx_policy import INPUT_NAME, onnx_session, OUTPUT_NAME
from sim2real.interop.isaaclab_import import _indices, import_isaaclab_run, load_actor
from sim2real.interop.isaaclab_run import read_run
from sim2real.interop.isaaclab_task import (
    IsaacLabSetupError, PYTHON_ENV_VAR, task_file_data, train_in_isaaclab, write_task_file)

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).resolve().parent / 'fixtures' / 'isaaclab_sim2real_quadruped_flat'
TASK = 'quadruped-flat'


@pytest.fixture(scope='module')
def ours():
    """Our task's own contract."""
    from sim2real.mdp.contract import contract_from_env
    from sim2real.training import build_env
    return contract_from_env(build_env(TASK, seed=0, num_envs=1, num_threads=1))


@pytest.fixture(scope='module')
def imported(tmp_path_factory):
    """The fixture run imported (its joint order from params/joint_names.yaml)."""
    out = tmp_path_factory.mktemp('import') / 'policy.onnx'
    return import_isaaclab_run(FIXTURE, TASK, out=out)


def test_the_imported_run_has_our_tasks_observation_contract(imported, ours):
    """105 inputs: the 6 terms of quadruped-flat in our order with our scales (gyro 0.25,
    joint velocity 0.05), Gaussian noise std (gyro 0.2 x 0.25 / sqrt 3 = 0.0289) and 3-tick
    history; our joints, default pose and gains."""
    def layout(contract):
        return [(t.name, t.size, t.scale, round(t.noise_std, 9), t.history_length, t.clip)
                for t in contract.observations]
    got = imported.contract
    assert layout(got) == layout(ours)
    assert got.observation_size == ours.observation_size == 105
    assert [t.history_length for t in got.observations] == [3, 3, 1, 3, 3, 1]
    assert got.observations[0].noise_std == pytest.approx(0.2 * 0.25 / 3 ** 0.5)
    assert got.joint_names == ours.joint_names
    assert got.default_joint_pos_rad == ours.default_joint_pos_rad
    assert got.action.kind == ours.action.kind
    assert got.action.params['scale'] == ours.action.params['scale']
    assert got.robot_params['isaaclab_joint_order'] == yaml.safe_load(
        (FIXTURE / 'params' / 'joint_names.yaml').read_text())
    assert imported.max_abs_diff < 1e-5


def test_history_is_reordered_newest_first_inside_the_graph(imported):
    """Our vector [g_t, g_t-1, g_t-2, ...] fed to the file equals the run's actor (with its
    normalizer) fed Isaac Lab's [g_t-2, g_t-1, g_t, ...]: each 3-tick term's blocks reversed."""
    contract = imported.contract
    obs = torch.randn(64, 105, generator=torch.Generator().manual_seed(2))
    blocks, offset = [], 0
    for spec in contract.observations:
        ticks = [obs[:, offset + k * spec.size: offset + (k + 1) * spec.size]
                 for k in range(spec.history_length)]
        blocks.extend(reversed(ticks))   # Isaac Lab: oldest first
        offset += spec.size * spec.history_length
    theirs = torch.cat(blocks, dim=1)
    actor, width = load_actor(read_run(FIXTURE))
    assert width == 105
    with torch.no_grad():
        expected = actor(theirs).numpy()
    got = onnx_session(imported.path).run([OUTPUT_NAME], {INPUT_NAME: obs.numpy()})[0]
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert not np.allclose(got, onnx_session(imported.path).run(
        [OUTPUT_NAME], {INPUT_NAME: theirs.numpy()})[0], atol=1e-3)


def test_the_index_map_by_hand():
    """Two joints (a, b) in our order, run order (b, a); a 2-tick 1-value term then a 1-tick
    per-joint term: the run's inputs are [x_t-1, x_t, j_b, j_a] = ours [1, 0, 3, 2]."""
    specs = [ObservationTermSpec(name='projected_gravity', size=1, history_length=2),
             ObservationTermSpec(name='joint_pos_rel', size=2, history_length=1)]
    assert _indices(specs, ['a', 'b'], ['b', 'a']) == [1, 0, 3, 2]
    specs[1] = ObservationTermSpec(name='joint_vel', size=2, history_length=2)
    # ours: x_t x_t-1 | a_t b_t a_t-1 b_t-1; theirs: x_t-1 x_t | b_t-1 a_t-1 b_t a_t
    assert _indices(specs, ['a', 'b'], ['b', 'a']) == [1, 0, 5, 4, 3, 2]


def test_the_imported_file_runs_in_our_env(imported):
    """`sim2real eval` runs it on quadruped-flat: 2 iterations do not walk, a verdict says so."""
    from sim2real.evaluate import evaluate
    result = evaluate(imported.path, episodes=2)
    assert result['episodes'] == 2 and result['verdict']['passed'] is False


def test_the_task_file_holds_the_task_as_trained(tmp_path):
    """The file names the builder and our URDF (same SHA-256 as the contract), carries the
    env config with --set applied and the training settings; the fixture's file is what
    produced the run."""
    path = write_task_file(TASK, tmp_path, [
        'env.commands.base_velocity.params.resampling_time_s=5.0', 'ppo.learning_rate=5e-4'])
    data = yaml.safe_load(path.read_text())
    assert data['isaaclab_env'] == 'sim2real.tasks.quadruped.isaaclab_env:env_cfg'
    assert file_sha256(data['urdf']) == data['contract']['urdf_sha256']
    assert Path(data['urdf']) == (ROOT / 'urdf' / 'quadruped.urdf').resolve()
    assert data['env']['commands']['base_velocity']['params']['resampling_time_s'] == 5.0
    assert data['train']['ppo']['learning_rate'] == 5e-4
    assert data['env']['decimation'] == 4 and data['contract']['policy_rate_hz'] == 50.0
    recorded = yaml.safe_load((FIXTURE / 'isaaclab_task.yaml').read_text())

    def terms(data):
        return [{k: t[k] for k in ('name', 'size', 'scale', 'noise_std', 'history_length')}
                for t in data['contract']['observations']]
    assert terms(recorded) == terms(task_file_data(TASK))


def test_a_task_without_an_isaac_lab_env_and_a_missing_venv_are_refused(
        tmp_path, monkeypatch, caplog):
    """quadrotor-hover names no builder; without SIM2REAL_ISAACLAB_PYTHON the command says
    which variable to set and exits 2 before writing anything; --algo, another run's
    checkpoints in the folder, and --set with --resume are refused by name."""
    from sim2real.cli.main import main
    with pytest.raises(IsaacLabSetupError, match='task "quadrotor-hover" has no Isaac Lab'):
        task_file_data('quadrotor-hover')
    monkeypatch.delenv(PYTHON_ENV_VAR, raising=False)
    run = tmp_path / 'run'
    assert main(['train', TASK, '--backend', 'isaaclab', '--run-dir', str(run)]) == 2
    assert PYTHON_ENV_VAR in caplog.text and not run.exists()
    monkeypatch.setenv(PYTHON_ENV_VAR, sys.executable)   # exists: the next refusals are ours
    caplog.clear()
    assert main(['train', TASK, '--backend', 'isaaclab', '--run-dir', str(run),
                 '--algo', 'sac']) == 2
    assert '--algo: not available with --backend isaaclab' in caplog.text
    run.mkdir()
    (run / 'model_10.pt').write_bytes(b'')
    with pytest.raises(IsaacLabSetupError, match='holds checkpoints of another run'):
        train_in_isaaclab(TASK, run)
    write_task_file(TASK, run)
    with pytest.raises(IsaacLabSetupError, match='--set with --resume'):
        train_in_isaaclab(TASK, run, sets=['ppo.learning_rate=1e-4'], resume=True)


def test_the_isaac_lab_modules_import_without_our_simulator():
    """Everything that runs in the Isaac Lab venv (our MuJoCo 4 is not there), function
    bodies included, imports only the Isaac Lab layer, the base and the URDF reader: checked
    on the source (AST), and by importing the modules in a fresh process without mujoco."""
    import ast
    files = sorted((ROOT / 'sim2real' / 'isaaclab').glob('*.py')) + [
        ROOT / 'tasks' / 'quadruped' / 'isaaclab_env.py']
    allowed = ('sim2real.isaaclab', 'sim2real.urdf', 'sim2real.onnx_io', 'sim2real.contract',
               'sim2real.terms')
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ''] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert not name.startswith('mujoco'), (path, name)
                if name.startswith('sim2real'):
                    assert name.startswith(allowed), (path, name)
    modules = ', '.join(['sim2real.tasks.quadruped.isaaclab_env'] + [
        f'sim2real.isaaclab.{p.stem}' for p in files if p.parent.name == 'isaaclab'
        and p.stem != '__init__'])
    code = (f'import sys, {modules}; '
            'bad = sorted(m for m in sys.modules if m.split(".")[0] == "mujoco" or '
            'm.startswith(("sim2real.tasks.hand", "sim2real.tasks.quadrotor", '
            '"sim2real.tasks.quadruped.scene"))); print(bad); sys.exit(1 if bad else 0)')
    done = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_policy_of_another_layout_is_refused_before_isaac_lab_starts(tmp_path, monkeypatch,
                                                                       caplog):
    """The Go2-class fixture imported (48 inputs: Isaac Lab's own Go2 terms) is a
    quadruped-flat policy by task, not by layout: `eval --backend isaaclab` exits 2 naming
    observations[0].name before any Isaac Lab process (the stand-in Python, /bin/false,
    would fail with another message)."""
    from sim2real.cli.main import main
    from tests.interop.fixture_run import FIXTURE as GO2_RUN
    onnx = import_isaaclab_run(GO2_RUN, TASK, out=tmp_path / 'go2.onnx',
                               urdf=ROOT / 'urdf' / 'quadruped.urdf').path
    monkeypatch.setenv(PYTHON_ENV_VAR, '/bin/false')
    assert main(['eval', str(onnx), '--backend', 'isaaclab', '--episodes', '2']) == 2
    assert "observations[0].name 'lin_vel_b': the Isaac Lab env computes 'ang_vel_b'" in \
        caplog.text
