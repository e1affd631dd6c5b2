"""The CLI a newcomer meets (issue 49): Ctrl-C keeps the run, export and eval name their
checkpoint, list and inspect, defaults in --help, tables with one verdict line, warnings on
sample size, no `nan` in training logs, URDF paths with or without their suffix.

Real subprocesses on tiny settings (16 envs, 1-3 iterations, one simulation thread).
"""

from __future__ import annotations

import json
from pathlib import Path
import shutil
import signal
import subprocess
import sys
import time

import pytest

from tests.system.hil_judged import assert_judged
from tests.system.test_cli import error_line, json_line, run_cli, TIMEOUT_S, train_args

ROOT = Path(__file__).resolve().parents[2]
POLICIES = ROOT / 'policies'
HOVER = POLICIES / 'quadrotor_hover.onnx'


def _tiny(run_dir: Path, *extra: str) -> list[str]:
    """A 16-env training run."""
    return train_args(run_dir, '--num-envs', '16', *extra)


@pytest.fixture(scope='module')
def two_checkpoints(tmp_path_factory) -> Path:
    """A run with checkpoints of iterations 1 and 2."""
    root = tmp_path_factory.mktemp('checkpoints')
    run_cli(*_tiny(root / 'run', '--max-iterations', '2', '--save-interval', '1'), cwd=root)
    return root / 'run'


def test_ctrl_c_saves_a_checkpoint_says_how_to_resume_and_exits_130(tmp_path):
    """SIGINT during training: the iteration in progress ends, a checkpoint of it is saved,
    one line says how to resume, exit 130, no traceback; --resume continues from it."""
    run_dir = tmp_path / 'run'
    args = [a for a in _tiny(run_dir, '--max-iterations', '500', '--save-interval', '1000')
            if a != '--json']
    proc = subprocess.Popen([sys.executable, '-m', 'sim2real.cli.main', *args], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        lines.append(line)
        if 'iteration 2/500' in line or not line:
            break
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=TIMEOUT_S)
    err = ''.join(lines) + err
    assert proc.returncode == 130, err
    assert 'Traceback' not in err and 'KeyboardInterrupt' not in err
    (said,) = [line for line in err.splitlines() if 'interrupted at iteration' in line]
    iteration = int(said.split('interrupted at iteration ')[1].split()[0])
    assert iteration >= 2
    assert said.endswith(f'resume with: sim2real train quadrotor-hover --run-dir {run_dir} '
                         '--resume')
    assert (run_dir / 'checkpoints' / f'model_{iteration:06d}.pt').is_file()
    assert json.loads((run_dir / 'summary.json').read_text())['interrupted'] is True
    summary = json_line(run_cli(*_tiny(run_dir, '--max-iterations', str(iteration + 1),
                                       '--resume'), cwd=tmp_path).stdout)
    assert summary['iterations'] == iteration + 1 and summary['interrupted'] is False


def test_export_and_eval_name_their_checkpoint_and_take_checkpoint_n(two_checkpoints,
                                                                     tmp_path):
    """export says which checkpoint it exported (the newest by default); --checkpoint 1
    takes the first; a checkpoint the run does not keep is named with those it does."""
    run = two_checkpoints
    text = run_cli('export', run, '--out', tmp_path / 'newest.onnx', cwd=tmp_path).stdout
    assert f'from {run / "checkpoints" / "model_000002.pt"};' in text
    first = json_line(run_cli('export', run, '--checkpoint', '1', '--out',
                              tmp_path / 'first.onnx', '--json', cwd=tmp_path).stdout)
    assert first['checkpoint'] == str(run / 'checkpoints' / 'model_000001.pt')
    assert (tmp_path / 'first.onnx').read_bytes() != (tmp_path / 'newest.onnx').read_bytes()
    missing = error_line(run_cli('export', run, '--checkpoint', '7', cwd=tmp_path, expect=2))
    assert 'no checkpoint of iteration 7' in missing and '(kept: 1, 2)' in missing
    result = json_line(run_cli('eval', run, '--checkpoint', '1', '--episodes', '2', '--json',
                               cwd=tmp_path, expect=None).stdout)
    assert result['checkpoint'] == first['checkpoint']
    onnx = error_line(run_cli('eval', HOVER, '--checkpoint', '1', cwd=tmp_path, expect=2))
    assert '--checkpoint' in onnx and 'ONNX file' in onnx


def test_list_shows_tasks_robots_and_shipped_policies_with_their_headline(tmp_path):
    """`sim2real list`: every task, the three HIL robots and each shipped policy with the
    figures its card's evaluation holds; --json gives the same as one object."""
    text = run_cli('list', cwd=tmp_path).stdout
    data = json_line(run_cli('list', '--json', cwd=tmp_path).stdout)
    names = {t['name'] for t in data['tasks']}
    assert names >= {'quadrotor-hover', 'quadruped-flat', 'hand-rotate'}
    assert {r['robot'] for r in data['robots']} >= {'hand', 'quadrotor', 'quadruped'}
    shipped = {Path(p['file']).name: p for p in data['policies']}
    assert set(shipped) == {p.name for p in POLICIES.glob('*.onnx')}
    hover = shipped['quadrotor_hover.onnx']
    assert hover['task'] == 'quadrotor-hover'
    assert hover['headline'].startswith('success_rate ') and 'episodes)' in hover['headline']
    for row in data['tasks'] + data['policies']:
        assert (row.get('name') or row['headline']) in text


def test_inspect_shows_the_contract_as_tables_and_refuses_an_altered_file(tmp_path):
    """Joints in the policy's order, each observation term with its size, the action and
    rates; JSON equal to the stored contract; a byte changed in the metadata: exit 2."""
    from sim2real.onnx_io import read_contract
    policy = POLICIES / 'quadruped_flat.onnx'
    contract = read_contract(policy)
    text = run_cli('inspect', policy, cwd=tmp_path).stdout
    rows = [line.split() for line in text.splitlines()]
    joints = [row[1] for row in rows if row[:1] and row[0].isdigit()]
    assert joints == list(contract.joint_names)
    assert f'observations ({contract.observation_size} inputs)' in text
    for term in contract.observations:
        assert [term.name, str(term.size), str(term.history_length)] in [r[:3] for r in rows]
    assert 'policy rate       50 Hz' in text and 'action: joint_position_offset' in text
    data = json_line(run_cli('inspect', policy, '--json', cwd=tmp_path).stdout)
    assert data['contract']['joint_names'] == list(contract.joint_names)
    assert data['digest'].startswith('verified')
    altered = tmp_path / 'altered.onnx'
    original = policy.read_bytes()
    altered.write_bytes(original.replace(b'"policy_rate_hz": 50.0', b'"policy_rate_hz": 60.0'))
    assert altered.read_bytes() != policy.read_bytes()
    assert 'policy_rate_hz' in error_line(run_cli('inspect', altered, cwd=tmp_path, expect=2))


@pytest.mark.parametrize('verb,shown', [
    ('eval', ['(default: 256)', '(default: 12345)']),
    ('train', ['run directory:', 'schedule:', 'simulation:', '(default: mujoco)']),
    ('hil', ['(default: 10.0)', '(default: all)']),
])
def test_help_shows_defaults_and_groups(verb, shown, tmp_path):
    """Every verb's --help shows its defaults; train's options come in groups."""
    text = run_cli(verb, '--help', cwd=tmp_path).stdout
    for piece in shown:
        assert piece in ' '.join(text.split()), piece
    assert '(default: None)' not in text and '(default: False)' not in text


def test_eval_prints_a_table_warns_on_sample_size_and_one_verdict_line(tmp_path):
    """Text output: a header, a metric/value/floor table, no Python dict; 4 episodes cannot
    resolve success_rate >= 0.9, said on stderr; one verdict line."""
    proc = run_cli('eval', HOVER, '--episodes', '4', cwd=tmp_path)
    lines = proc.stdout.splitlines()
    assert lines[0].startswith('eval quadrotor-hover: ') and '4 episodes' in lines[0]
    assert lines[2].split() == ['metric', 'value', 'floor']
    assert ['success_rate', '1', '>=', '0.9'] in [line.split() for line in lines]
    assert '{' not in proc.stdout
    assert ('success_rate >= 0.9 fails on one episode in 4; use --episodes >= 10'
            in proc.stderr)
    verdicts = [line for line in proc.stderr.splitlines() if line.startswith('verdict ')]
    assert verdicts == ['verdict eval quadrotor-hover: pass: success_rate 1 >= 0.9']


def test_training_log_never_prints_nan_and_train_prints_a_table(tmp_path):
    """SAC hover's first iterations end no episode: the log shows 'return -', never 'nan';
    without --json train prints its figures as a table and the next command."""
    run_dir = tmp_path / 'run'
    args = [a for a in train_args(run_dir, '--algo', 'sac', '--num-envs', '16',
                                  '--max-iterations', '3', '--set', 'sac.log_interval=1')
            if a != '--json']
    proc = run_cli(*args, cwd=tmp_path)
    iterations = [line for line in proc.stderr.splitlines() if ' iteration ' in line]
    assert len(iterations) == 3 and all('return -' in line for line in iterations)
    assert 'nan' not in proc.stderr.lower()
    assert proc.stdout.startswith(f'train quadrotor-hover: {run_dir}')
    assert f'next: sim2real export {run_dir}' in proc.stdout and '{' not in proc.stdout


def test_urdf_path_with_or_without_suffix(tmp_path):
    """--set env.scene.params.urdf takes a path with or without .urdf; a missing one names
    the files tried."""
    urdf = tmp_path / 'copter.urdf'
    shutil.copy(ROOT / 'urdf' / 'quadrotor.urdf', urdf)
    for given in (urdf, tmp_path / 'copter'):
        run_cli(*_tiny(tmp_path / f'run-{given.name}', '--max-iterations', '1', '--set',
                       f'env.scene.params.urdf={given}'), cwd=tmp_path)
    missing = error_line(run_cli(*_tiny(tmp_path / 'run-x', '--max-iterations', '1', '--set',
                                        f'env.scene.params.urdf={tmp_path / "x"}'),
                                 cwd=tmp_path, expect=2))
    assert f'tried {tmp_path / "x.urdf"}, {tmp_path / "x"}' in missing


def test_a_folder_path_through_a_file_is_one_error_line(tmp_path):
    """--run-dir below a file: exit 2 with one ERROR line, no traceback."""
    (tmp_path / 'file').write_text('x')
    proc = run_cli(*_tiny(tmp_path / 'file' / 'run', '--max-iterations', '1'), cwd=tmp_path,
                   expect=2)
    assert 'Traceback' not in proc.stderr
    assert 'file' in error_line(proc)


def _small_files() -> None:
    """In the child: files over 20 kB cannot be written (EFBIG, as a full disk refuses)."""
    import resource
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))


def test_a_file_the_machine_cannot_write_is_one_error_line_and_leaves_no_part(tmp_path):
    """export and eval --video where no file over 20 kB can be written (a full disk's
    class of error): exit 2, one ERROR line naming the file, no traceback, no partial file
    and the previous file kept."""
    out = tmp_path / 'policy.onnx'
    out.write_bytes(b'previous')
    for args, target in ((['export', HOVER, '--out', out], out),
                         (['eval', HOVER, '--episodes', '1', '--video', tmp_path / 'v.gif'],
                          tmp_path / 'v.gif')):
        proc = subprocess.run([sys.executable, '-m', 'sim2real.cli.main', *map(str, args)],
                              cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT_S,
                              preexec_fn=_small_files)
        assert 'Traceback' not in proc.stderr
        line = error_line(proc)
        assert f'cannot write {target}' in line and 'File too large' in line, line
    assert out.read_bytes() == b'previous'
    assert sorted(p.name for p in tmp_path.iterdir()) == ['policy.onnx']


def test_resume_or_new_starts_a_run_then_continues_it(tmp_path):
    """--resume-or-new in an empty folder starts a run, the same command later continues it
    from its checkpoint; run files without a checkpoint are refused by name."""
    run_dir = tmp_path / 'run'
    first = json_line(run_cli(*_tiny(run_dir, '--max-iterations', '1', '--resume-or-new'),
                              cwd=tmp_path).stdout)
    second = json_line(run_cli(*_tiny(run_dir, '--max-iterations', '2', '--resume-or-new'),
                               cwd=tmp_path).stdout)
    assert (first['iterations'], second['iterations']) == (1, 2)
    assert [s['start_iteration'] for s in second['segments']] == [0, 1]
    shutil.rmtree(run_dir / 'checkpoints')
    refused = error_line(run_cli(*_tiny(run_dir, '--resume-or-new'), cwd=tmp_path, expect=2))
    assert 'holds run files but no checkpoint' in refused
    both = error_line(run_cli(*_tiny(run_dir, '--resume', '--resume-or-new'), cwd=tmp_path,
                              expect=2))
    assert 'choose one' in both


def test_hil_prints_its_figures_and_a_row_per_scenario(tmp_path):
    """`hil` without --json: a header naming the policy and the log folder, the nominal
    figures, one row per scenario with what it expects and its result, one verdict line."""
    proc = run_cli('hil', 'quadrotor', '--policy', HOVER, '--faults', 'nan_imu',
                   '--duration', '2', '--log-dir', tmp_path / 'logs', cwd=tmp_path,
                   expect=None)
    assert_judged(proc)
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f'hil quadrotor: {HOVER}') and str(tmp_path / 'logs') in lines[0]
    rows = [line.split()[:3] for line in lines]
    assert ['metric', 'value', 'floor'] in rows and ['achieved_rate_hz'] in [r[:1] for r in rows]
    assert ['scenario', 'expected', 'result'] in rows
    # 'unjudged' where the simulated robot stalled in every attempt (hil_judged)
    assert {('nominal', 'fly'), ('nan_imu', 'latch')} == {
        (r[0], r[1]) for r in rows if len(r) == 3 and r[2] in ('pass', 'unjudged')}
    assert '{' not in proc.stdout
    verdicts = [line for line in proc.stderr.splitlines() if line.startswith('verdict ')]
    assert verdicts == ['verdict hil quadrotor: pass: all 2 scenarios pass'] or (
        verdicts[0].startswith('verdict hil quadrotor: INCONCLUSIVE: ')), verdicts
