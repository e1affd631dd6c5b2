"""System tests of the `sim2real` command line: real subprocesses on tiny training settings.

Settings are kept small for a 2-core CI machine: 16-64 envs, 1-6 PPO iterations (the task's
rollout length), 8 evaluation episodes, one simulation thread.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest
import yaml

TIMEOUT_S = 300
TASKS = ('quadrotor-hover', 'quadrotor-track')
TIMING_KEYS = ('wall_s', 'steps_per_s', 'segments')   # segments: wall_s of each stretch
CONTRACT_KEY = 'sim2real.contract'
# policy observation terms of quadrotor-hover: position error 3, rotation matrix 9,
# linear velocity 3, angular velocity 3, the last 4 actions 4 x 4
HOVER_OBS_SIZE = 3 + 9 + 3 + 3 + 16
# the run shared by several tests (see `hover_run`)
BASE_ENVS, BASE_ITERATIONS, EPISODES = 64, 3, 8


def cli_command() -> list[str]:
    """The installed console script next to this interpreter, else `python -m`."""
    script = Path(sys.executable).with_name('sim2real')
    if script.is_file():
        return [str(script)]
    return [sys.executable, '-m', 'sim2real.cli.main']


def run_cli(*args: str, cwd: Path, expect: int | None = 0) -> subprocess.CompletedProcess:
    """Run the CLI to completion; check its exit code unless expect is None."""
    proc = subprocess.run(
        [sys.executable, '-m', 'sim2real.cli.main', *map(str, args)], cwd=cwd,
        capture_output=True, text=True, timeout=TIMEOUT_S)
    if expect is not None:
        assert proc.returncode == expect, (
            f'exit {proc.returncode} != {expect} for {args}\n'
            f'stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}')
    return proc


def train_args(run_dir: Path, *extra: str, task: str = 'quadrotor-hover') -> list[str]:
    """`train` arguments with a fixed simulation thread count and no progress bar."""
    return ['train', task, '--run-dir', str(run_dir), '--threads', '1', '--no-progress',
            '--json', *extra]


def json_line(stdout: str) -> dict:
    """The single JSON object a command printed on stdout."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    assert len(lines) == 1, f'expected one line on stdout, got {lines!r}'
    return json.loads(lines[0])


def error_line(proc: subprocess.CompletedProcess) -> str:
    """The one-line error message of a failed command (the last line of stderr)."""
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith('ERROR ')]
    assert errors == lines[-1:], f'expected one ERROR line, last on stderr:\n{proc.stderr}'
    return errors[0]


def tree_digest(root: Path) -> dict[str, str]:
    """SHA-256 of every file under root, by relative path."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob('*')) if p.is_file()}


def checkpoints(run_dir: Path) -> list[Path]:
    """The run's model_XXXXXX.pt files, oldest first."""
    return sorted((run_dir / 'checkpoints').glob('model_*.pt'))


def read_contract(path: Path) -> dict:
    """The contract JSON stored in an ONNX file's metadata."""
    import onnx
    model = onnx.load(str(path))
    meta = {p.key: p.value for p in model.metadata_props}
    return json.loads(meta[CONTRACT_KEY])


def steps_per_env(run_dir: Path) -> int:
    """PPO rollout length per env and iteration, from the run's config.yaml."""
    config = yaml.safe_load((run_dir / 'config.yaml').read_text())
    return config['algo_cfg']['num_steps_per_env']


def comparable(summary: dict) -> dict:
    """A summary without its timing fields."""
    return {k: v for k, v in summary.items()
            if k not in TIMING_KEYS and not k.startswith('perf/')}


@pytest.fixture(scope='module')
def hover_run(tmp_path_factory) -> dict:
    """One trained and exported quadrotor-hover run (seed 0), shared read-only by tests."""
    root = tmp_path_factory.mktemp('hover')
    run_dir = root / 'run'
    start = time.monotonic()
    train = run_cli(*train_args(run_dir, '--seed', '0', '--num-envs', str(BASE_ENVS),
                                '--max-iterations', str(BASE_ITERATIONS)), cwd=root)
    export = run_cli('export', run_dir, '--json', cwd=root)
    return {'root': root, 'run_dir': run_dir, 'train': train, 'export': export,
            'onnx': run_dir / 'policy.onnx', 'seconds': time.monotonic() - start}


def test_tasks_lists_quadrotor_tasks(tmp_path):
    """`sim2real tasks` exits 0 and lists quadrotor-hover and quadrotor-track."""
    proc = subprocess.run([*cli_command(), 'tasks'], cwd=tmp_path, capture_output=True,
                          text=True, timeout=TIMEOUT_S)
    assert proc.returncode == 0, proc.stderr
    names = [line.split()[0] for line in proc.stdout.splitlines() if line.strip()]
    for task in TASKS:
        assert task in names
    line = next(row for row in proc.stdout.splitlines() if row.startswith('quadrotor-hover'))
    assert line.endswith('(actions: thrust_body_rates, rotor_speeds; algorithm: ppo)')


@pytest.mark.slow
def test_train_export_eval_round_trip(hover_run):
    """train writes its artefacts, export matches torch within 1e-5, eval reports N episodes."""
    run_dir = hover_run['run_dir']
    summary = json.loads((run_dir / 'summary.json').read_text())
    assert json_line(hover_run['train'].stdout) == summary
    for key in ('task', 'seed', 'backend', 'env_steps', 'iterations', 'wall_s',
                'steps_per_s', 'final_return'):
        assert key in summary, key
    config = yaml.safe_load((run_dir / 'config.yaml').read_text())
    assert (summary['task'], summary['seed'], summary['backend']) == (
        'quadrotor-hover', 0, 'mujoco')
    assert summary['iterations'] == BASE_ITERATIONS
    # e.g. 3 iterations x 64 envs x 16 steps per env = 3072
    assert summary['env_steps'] == BASE_ITERATIONS * BASE_ENVS * steps_per_env(run_dir)
    assert summary['wall_s'] > 0 and summary['steps_per_s'] > 0
    assert config['args']['task'] == 'quadrotor-hover'
    assert config['args']['seed'] == 0
    assert config['args']['num_envs'] == BASE_ENVS
    assert config['args']['max_iterations'] == BASE_ITERATIONS
    assert config['args']['action'] == 'thrust_body_rates'
    assert config['num_envs'] == BASE_ENVS
    assert (run_dir / 'curves.png').read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
    assert list((run_dir / 'tb').glob('events.out.tfevents.*'))
    assert [p.name for p in checkpoints(run_dir)] == ['model_000003.pt']

    export = json_line(hover_run['export'].stdout)
    assert export['onnx'] == str(hover_run['onnx'])
    assert export['samples'] == 1000
    assert 0.0 <= export['max_abs_diff'] <= 1e-5
    contract = read_contract(hover_run['onnx'])
    assert contract['version'] == 2
    assert contract['task'] == 'quadrotor-hover'
    for term in contract['observations']:   # the training band, measured over 65536 ticks
        assert term['band']['samples'] == 65536 * term['history_length']
        assert len(term['band']['low']) == term['size']
    assert sum(term['size'] for term in contract['observations']) == HOVER_OBS_SIZE
    assert contract['action']['kind'] == 'thrust_body_rates'
    assert contract['action']['size'] == 4

    for policy, source in ((hover_run['onnx'], 'onnx'), (run_dir, 'checkpoint')):
        # 3 iterations do not fly: the verdict fails (exit 1) and says why on stderr
        proc = run_cli('eval', policy, '--episodes', EPISODES, '--json', cwd=hover_run['root'],
                       expect=1)
        result = json_line(proc.stdout)
        assert not result['verdict']['passed']
        assert f'success_rate {result["success_rate"]:.4g} >= 0.9 not met' in proc.stderr
        assert 'verdict eval quadrotor-hover: FAIL' in proc.stderr
        assert result['episodes'] == EPISODES
        assert result['source'] == source
        assert result['task'] == 'quadrotor-hover'
        assert 0.0 <= result['success_rate'] <= 1.0
        assert 0.0 <= result['termination_rate'] <= 1.0


def test_sac_train_export_eval_and_resume(tmp_path):
    """`train --algo sac` runs the same pipeline: summary and config name the algorithm, the
    squashed policy exports within 1e-5 and evaluates from the file and the checkpoint; a
    resume continues SAC and refuses to switch algorithm."""
    run_dir = tmp_path / 'sac'
    sac = ['--algo', 'sac', '--seed', '0', '--num-envs', '32', '--save-interval', '2',
           '--set', 'sac.learning_starts=64', '--set', 'sac.batch_size=64']
    proc = run_cli(*train_args(run_dir, *sac, '--max-iterations', '4'), cwd=tmp_path)
    summary = json_line(proc.stdout)
    assert (summary['algo'], summary['workers'], summary['iterations']) == ('sac', 0, 4)
    assert summary['env_steps'] == 4 * 32   # one step per env and iteration (sac default)
    config = yaml.safe_load((run_dir / 'config.yaml').read_text())
    assert config['algo'] == 'sac' and config['args']['algo'] == 'sac'
    assert config['algo_cfg']['batch_size'] == 64
    export = json_line(run_cli('export', run_dir, '--json', cwd=tmp_path).stdout)
    assert 0.0 <= export['max_abs_diff'] <= 1e-5
    for policy in (run_dir / 'policy.onnx', run_dir):
        result = json_line(run_cli('eval', policy, '--episodes', '4', '--json', cwd=tmp_path,
                                   expect=1).stdout)
        assert result['episodes'] == 4
    proc = run_cli(*train_args(run_dir, '--resume', '--max-iterations', '6'), cwd=tmp_path)
    assert json_line(proc.stdout)['iterations'] == 6
    assert 'hold no replay buffer: it refills with 64 transitions' in proc.stderr
    proc = run_cli(*train_args(run_dir, '--resume', '--algo', 'ppo'), cwd=tmp_path, expect=None)
    assert proc.returncode != 0 and 'keeps its algorithm' in proc.stderr


def test_rotor_speeds_action_round_trip(tmp_path):
    """--action rotor_speeds trains one iteration and its exported contract says so."""
    run_dir = tmp_path / 'run'
    summary = json_line(run_cli(*train_args(run_dir, '--num-envs', '16', '--max-iterations',
                                            '1', '--action', 'rotor_speeds'),
                                cwd=tmp_path).stdout)
    assert (summary['action'], summary['iterations'], summary['env_steps']) == (
        'rotor_speeds', 1, 1 * 16 * steps_per_env(run_dir))
    export = json_line(run_cli('export', run_dir, '--json', cwd=tmp_path).stdout)
    assert export['max_abs_diff'] <= 1e-5
    contract = read_contract(run_dir / 'policy.onnx')
    assert contract['action']['kind'] == 'rotor_speeds'
    assert contract['action']['size'] == 4
    assert sum(term['size'] for term in contract['observations']) == HOVER_OBS_SIZE


@pytest.mark.slow
def test_same_seed_same_run_different_seed_different_run(hover_run, tmp_path):
    """Seed 0 twice gives identical summaries and weights but timing; seed 1 differs."""
    import torch

    args = ('--num-envs', str(BASE_ENVS), '--max-iterations', str(BASE_ITERATIONS))
    again, other = tmp_path / 'seed0', tmp_path / 'seed1'
    run_cli(*train_args(again, '--seed', '0', *args), cwd=tmp_path)
    run_cli(*train_args(other, '--seed', '1', *args), cwd=tmp_path)
    first = json.loads((hover_run['run_dir'] / 'summary.json').read_text())
    second = json.loads((again / 'summary.json').read_text())
    third = json.loads((other / 'summary.json').read_text())
    # 64 envs x 3 rollouts: some episodes end (crashes), so final_return is a number
    assert isinstance(first['final_return'], float)
    assert isinstance(third['final_return'], float)
    assert comparable(first) == comparable(second)
    assert third['final_return'] != first['final_return']

    def weights(run_dir: Path) -> dict:
        state = torch.load(checkpoints(run_dir)[-1], map_location='cpu', weights_only=True)
        return state['model']
    a, b = weights(hover_run['run_dir']), weights(again)
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_kill_and_resume_finishes_the_run(tmp_path):
    """SIGKILL after the first checkpoint; --resume continues from it up to the total."""
    run_dir, total, envs = tmp_path / 'run', 6, 16
    args = train_args(run_dir, '--seed', '3', '--num-envs', str(envs), '--max-iterations',
                      str(total), '--save-interval', '1')
    proc = subprocess.Popen([sys.executable, '-m', 'sim2real.cli.main', *args], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while not checkpoints(run_dir):
            assert proc.poll() is None, f'train exited with {proc.returncode} before saving'
            assert time.monotonic() < deadline, 'no checkpoint appeared'
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL, 'train finished before it could be killed'
    assert not (run_dir / 'summary.json').exists()
    saved = int(re.fullmatch(r'model_(\d+)\.pt', checkpoints(run_dir)[-1].name).group(1))
    assert 1 <= saved < total
    # what a kill in the middle of save_checkpoint leaves: its mkstemp file, half written
    stale = run_dir / 'checkpoints' / f'.model_{saved + 1:06d}.pt.k1ll3d.tmp'
    stale.write_bytes(checkpoints(run_dir)[-1].read_bytes()[:1000])

    proc = run_cli(*args, '--resume', cwd=tmp_path)
    summary = json_line(proc.stdout)
    assert summary['iterations'] == total
    assert summary['env_steps'] == total * envs * steps_per_env(run_dir)
    match = re.search(r'resumed from (\S+) at iteration (\d+)', proc.stderr)
    assert match, proc.stderr
    assert Path(match.group(1)).name == f'model_{saved:06d}.pt'
    assert int(match.group(2)) == saved
    assert f'iteration {saved + 1}/{total}' in proc.stderr
    assert f'iteration {saved}/{total}' not in proc.stderr
    assert checkpoints(run_dir)[-1].name == f'model_{total:06d}.pt'
    assert not list(run_dir.rglob('*.tmp')), list(run_dir.rglob('*.tmp'))


@pytest.mark.parametrize('damage', ['truncate', 'garbage'])
def test_corrupt_checkpoint_is_refused(hover_run, tmp_path, damage):
    """A damaged newest checkpoint: train --resume and eval exit 2 naming it, files kept."""
    run_dir = tmp_path / 'run'
    shutil.copytree(hover_run['run_dir'], run_dir)
    newest = checkpoints(run_dir)[-1]
    data = newest.read_bytes()
    newest.write_bytes(data[:len(data) // 2] if damage == 'truncate' else b'garbage\n' * 64)
    before = tree_digest(tmp_path)

    proc = run_cli(*train_args(run_dir, '--resume'), cwd=tmp_path, expect=2)
    assert str(newest) in error_line(proc)
    proc = run_cli('eval', run_dir, '--episodes', EPISODES, '--json', cwd=tmp_path, expect=2)
    assert str(newest) in error_line(proc)
    assert proc.stdout == ''
    assert tree_digest(tmp_path) == before


def edit_contract(source: Path, target: Path, edit, bind: bool = True) -> None:
    """Copy an ONNX policy, applying edit(contract dict) to its metadata contract, bound to
    the graph again as an export would (bind=False: edited after export)."""
    import onnx
    from sim2real.contract_digest import bind_contract_json
    model = onnx.load(str(source))
    for prop in model.metadata_props:
        if prop.key == CONTRACT_KEY:
            contract = json.loads(prop.value)
            edit(contract)
            prop.value = json.dumps(contract, sort_keys=True)
    if bind:
        bind_contract_json(model, json.dumps(contract, sort_keys=True))
    onnx.save(model, str(target))


def _grow_first_term(contract: dict) -> None:
    contract['observations'][0]['size'] += 1
    contract['observations'][0]['band'] = None   # measured for the old size


def _halve_policy_rate(contract: dict) -> None:
    contract['policy_rate_hz'] /= 2


def _next_version(contract: dict) -> None:
    contract['version'] += 1


@pytest.mark.parametrize('edit, field', [
    (_grow_first_term, 'observations'),
    (_halve_policy_rate, 'policy_rate_hz'),
    (_next_version, 'version'),
])
def test_contract_mismatch_is_refused(hover_run, tmp_path, edit, field):
    """eval of an ONNX file bound to a contract its task does not give (an export of another
    version) exits 2 naming the field."""
    edited = tmp_path / 'edited.onnx'
    edit_contract(hover_run['onnx'], edited, edit)
    proc = run_cli('eval', edited, '--episodes', EPISODES, '--json', cwd=tmp_path, expect=2)
    assert f'"{field}"' in error_line(proc)
    assert proc.stdout == ''


def test_contract_edited_after_export_is_refused(hover_run, tmp_path):
    """eval of an ONNX file whose contract was edited after export exits 2: the digest no
    longer holds, and the message names the changed field."""
    edited = tmp_path / 'edited.onnx'
    edit_contract(hover_run['onnx'], edited, _halve_policy_rate, bind=False)
    proc = run_cli('eval', edited, '--episodes', EPISODES, '--json', cwd=tmp_path, expect=2)
    assert error_line(proc).startswith(f'ERROR sim2real: policy_rate_hz: {edited} was altered '
                                       'after export')
    assert proc.stdout == ''


def test_not_an_onnx_file_is_refused(tmp_path):
    """eval of a text file named .onnx exits 2 saying it is not a readable ONNX file."""
    path = tmp_path / 'policy.onnx'
    path.write_text('this is not an ONNX model\n' * 10)
    proc = run_cli('eval', path, '--episodes', EPISODES, '--json', cwd=tmp_path, expect=2)
    message = error_line(proc)
    assert str(path) in message
    assert 'ONNX' in message


def test_unknown_task_and_bad_action_are_rejected(tmp_path):
    """An unknown task exits 2 listing the tasks; a misspelt --action exits 2 listing the
    task's actions; neither writes anything."""
    proc = run_cli(*train_args(tmp_path / 'run', task='quadrotor-hoover'), cwd=tmp_path,
                   expect=2)
    message = error_line(proc)
    assert 'quadrotor-hoover' in message
    for task in TASKS:
        assert task in message
    assert not (tmp_path / 'run').exists()

    proc = run_cli(*train_args(tmp_path / 'run', '--action', 'thrust_bodyrates'),
                   cwd=tmp_path, expect=2)
    assert ('task "quadrotor-hover" has no action "thrust_bodyrates"; its actions: '
            'thrust_body_rates, rotor_speeds') in error_line(proc)
    assert not (tmp_path / 'run').exists()


def test_eval_video_writes_an_animated_gif(hover_run, tmp_path):
    """eval --video renders one 7 s episode offscreen: a GIF with one frame per 40 ms."""
    gif = tmp_path / 'rollout.gif'
    result = json_line(run_cli('eval', hover_run['onnx'], '--episodes', '2', '--json',
                               '--video', gif, cwd=tmp_path, expect=1).stdout)
    assert result['video'] == str(gif)
    from PIL import Image
    with Image.open(gif) as image:
        assert image.format == 'GIF' and image.size == (480, 360)
        # 25 fps over a 7 s episode of 100 Hz policy steps: every 4th of 699 steps
        assert image.n_frames == 175


def test_train_and_eval_on_mjwarp(tmp_path):
    """`--backend mjwarp` (Warp's CPU device) trains, records backend and device in the
    summary, and its checkpoint evaluates on both backends alike (an untrained policy:
    episode ends may differ by one of 8)."""
    run = tmp_path / 'mjwarp'
    out = json_line(run_cli(*train_args(run, '--num-envs', '16', '--max-iterations', '2',
                                        '--backend', 'mjwarp', '--device', 'cpu'),
                            cwd=tmp_path).stdout)
    assert (out['backend'], out['device'], out['iterations']) == ('mjwarp', 'cpu', 2)
    assert out['env_steps'] == 2 * 16 * 24
    results = {}
    for backend in ('mujoco', 'mjwarp'):
        results[backend] = json_line(run_cli('eval', run, '--episodes', '8', '--json',
                                             '--backend', backend, cwd=tmp_path,
                                             expect=1).stdout)
        assert results[backend]['backend'] == backend
    ref, warp = results['mujoco'], results['mjwarp']
    assert warp['success_rate'] == ref['success_rate']
    assert warp['termination_rate'] == pytest.approx(ref['termination_rate'], abs=1 / 8)


@pytest.mark.slow
def test_robustness_sweep_writes_its_report_and_exits_1_below_the_floors(hover_run, tmp_path):
    """A 3-iteration policy over a covering design: every point judged, the three report
    files written, one line per kind of point, and exit 1 (it is far below its floors)."""
    proc = run_cli('robustness', hover_run['onnx'], '--episodes', '2', '--max-corners', '8',
                   '--out', tmp_path, '--no-progress', cwd=tmp_path, expect=1)
    rows = {line.split()[0]: line.split()[1:] for line in proc.stdout.splitlines()
            if line.split()[:1] in (['nominal'], ['edge'], ['corner'], ['past_edge'])}
    assert set(rows) == {'nominal', 'edge', 'corner', 'past_edge'}, proc.stdout
    assert int(rows['corner'][2]) > 0   # kind, points, pass, fail
    verdict = next(line for line in proc.stderr.splitlines() if line.startswith('verdict'))
    assert verdict.startswith('verdict robustness quadrotor-hover: FAIL: ')
    assert f'corner {rows["corner"][2]}' in verdict and 'edge 0' not in verdict
    report = json.loads((tmp_path / 'robustness.json').read_text())
    kinds = [p['kind'] for p in report['points']]
    # 6 box parameters: 1 nominal, 12 edges, 4 physical x 2 + 2 one-sided past edges
    assert (kinds.count('nominal'), kinds.count('edge'), kinds.count('past_edge')) == (1, 12, 10)
    assert report['corner_design'] == 'strength-3 covering design'
    assert not report['passed'] and report['failed_points'] > 0
    assert all(p['episodes'] == 2 for p in report['points'])
    past = {p['label'] for p in report['points'] if p['kind'] == 'past_edge'}
    # delay 0-2 ticks: 2.5 rounds away from nominal to 3; tau x0.6-1.4: 0.5 and 1.5
    assert {'action_delay_ticks=3', 'motor_tau_scale=1.5', 'motor_tau_scale=0.5',
            'mass_scale=0.75'} <= past
    text = (tmp_path / 'robustness.md').read_text()
    assert '| motor_tau_scale | 0.6 - 1.4 | 1 |' in text and '**FAIL**' in text
    assert (tmp_path / 'robustness.png').read_bytes()[:4] == b'\x89PNG'


def test_set_overrides_are_checked_and_stored(tmp_path):
    """A misspelt or mistyped --set exits 2 naming the field before anything is written; valid
    ones reach the env, PPO and the schedule and are stored with the run."""
    run_dir = tmp_path / 'run'
    proc = run_cli(*train_args(run_dir, '--set', 'ppo.learning_rte=3e-4'), cwd=tmp_path,
                   expect=2)
    assert 'did you mean "learning_rate"' in error_line(proc)
    proc = run_cli(*train_args(run_dir, '--set', 'env.rewards.tilt.weight=high'),
                   cwd=tmp_path, expect=2)
    assert "env.rewards.tilt.weight takes float, not 'high'" in error_line(proc)
    assert not run_dir.exists()

    run_cli(*train_args(run_dir, '--num-envs', '16', '--set', 'ppo.num_steps_per_env=8',
                        '--set', 'env.rewards.tilt.weight=-0.5',
                        '--set', 'train.max_iterations=2'), cwd=tmp_path)
    config = yaml.safe_load((run_dir / 'config.yaml').read_text())
    assert steps_per_env(run_dir) == 8
    assert config['env']['rewards']['tilt']['weight'] == -0.5
    assert config['runner']['max_iterations'] == 2
    assert config['args']['sets'] == ['ppo.num_steps_per_env=8', 'env.rewards.tilt.weight=-0.5',
                                      'train.max_iterations=2']
    assert [p.name for p in checkpoints(run_dir)] == ['model_000002.pt']


@pytest.mark.parametrize('args, flag, message', [
    (['train', 'quadrotor-hover', '--run-dir', 'r', '--num-envs', '0'], '--num-envs',
     'must be at least 1, got 0'),
    (['train', 'quadrotor-hover', '--run-dir', 'r', '--num-envs', '-5'], '--num-envs',
     'must be at least 1, got -5'),
    (['train', 'quadrotor-hover', '--run-dir', 'r', '--max-iterations', '0'],
     '--max-iterations', 'must be at least 1, got 0'),
    (['train', 'quadrotor-hover', '--run-dir', 'r', '--max-iterations', '-1'],
     '--max-iterations', 'must be at least 1, got -1'),
    (['train', 'quadrotor-hover', '--run-dir', 'r', '--workers', '-1'], '--workers',
     'must be at least 0, got -1'),
    (['train', 'quadrotor-hover', '--run-dir', 'r', '--num-envs', 'many'], '--num-envs',
     "must be an integer, got 'many'"),
    (['eval', 'policy.onnx', '--episodes', '0'], '--episodes', 'must be at least 1, got 0'),
    (['export', 'r', '--samples', '0'], '--samples', 'must be at least 1, got 0'),
    (['hil', 'quadrotor', '--policy', 'p.onnx', '--duration', '-2'], '--duration',
     'must be a finite number > 0, got -2'),
])
def test_counts_are_checked_when_parsed_naming_the_flag(tmp_path, args, flag, message):
    """Zero or negative counts and durations are refused before anything runs: exit 2, the
    flag and what it must be named on the last line, no run directory made (they used to
    train 300 iterations, use 2048 envs, train nothing with exit 0, or fail in MuJoCo)."""
    proc = run_cli(*args, cwd=tmp_path, expect=2)
    assert proc.stderr.strip().splitlines()[-1].endswith(f'argument {flag}: {message}')
    assert not (tmp_path / 'r').exists()


def test_version_and_verbose_after_the_verb(tmp_path):
    """`--version` prints the package version; `-v` is accepted after the verb."""
    from sim2real import __version__
    assert run_cli('--version', cwd=tmp_path).stdout.strip() == f'sim2real {__version__}'
    proc = run_cli('tasks', '-v', cwd=tmp_path)
    assert 'quadrotor-hover' in proc.stdout


def test_a_run_directory_that_holds_a_run_needs_resume_or_overwrite(hover_run, tmp_path):
    """Training into a folder that holds a run is refused naming its last checkpoint and
    both flags, nothing changed; --resume where there is no checkpoint is refused;
    --overwrite removes the run's files (not others) and starts over; a file as --run-dir
    is refused. Each exit 2 with one ERROR line, no traceback."""
    run = tmp_path / 'run'
    shutil.copytree(hover_run['run_dir'], run)
    (run / 'notes.txt').write_text('mine')
    before = tree_digest(run)
    line = error_line(run_cli(*train_args(run, '--max-iterations', '1'), cwd=tmp_path, expect=2))
    assert 'holds a run (last checkpoint model_' in line and '--resume' in line
    assert '--overwrite' in line and tree_digest(run) == before
    empty = tmp_path / 'empty'
    line = error_line(run_cli(*train_args(empty, '--resume'), cwd=tmp_path, expect=2))
    assert 'no checkpoint under' in line and 'drop --resume' in line
    a_file = tmp_path / 'a_file'
    a_file.write_text('x')
    line = error_line(run_cli(*train_args(a_file), cwd=tmp_path, expect=2))
    assert 'is a file, not a folder' in line and 'Traceback' not in line
    run_cli(*train_args(run, '--overwrite', '--num-envs', '64', '--max-iterations', '1'),
            cwd=tmp_path)
    names = sorted(p.name for p in (run / 'checkpoints').glob('model_*.pt'))
    assert names == ['model_000001.pt'] and (run / 'notes.txt').read_text() == 'mine'
