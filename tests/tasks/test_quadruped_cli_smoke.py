"""quadruped-flat end to end through the CLI: train 2 iterations, export, evaluate."""

import json
import subprocess
import sys

from sim2real.export.onnx_policy import read_contract

TIMEOUT_S = 300


def _cli(*args, cwd, expect=0):
    """Run `python -m sim2real.cli.main args` and return its single JSON line."""
    proc = subprocess.run([sys.executable, '-m', 'sim2real.cli.main', *map(str, args)],
                          cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert proc.returncode == expect, f'{args}: exit {proc.returncode}\n{proc.stderr}'
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    return json.loads(lines[0])


def test_train_export_eval_quadruped_flat(tmp_path):
    """64 envs x 2 iterations train, export with a verified ONNX, and evaluate 4 episodes
    reporting lin_vel_error_mps, yaw_rate_error_radps and fall_rate."""
    run = tmp_path / 'run'
    summary = _cli('train', 'quadruped-flat', '--run-dir', run, '--num-envs', 64,
                   '--max-iterations', 2, '--threads', 1, '--no-progress', '--json',
                   cwd=tmp_path)
    assert summary['task'] == 'quadruped-flat' and summary['iterations'] == 2
    assert summary['env_steps'] == 2 * 24 * 64
    exported = _cli('export', run, '--samples', 100, '--band-samples', 512, '--json',
                    cwd=tmp_path)
    assert exported['max_abs_diff'] < 1e-5
    contract = read_contract(exported['onnx'])
    # 3 ticks of angular velocity, gravity, 12 joint positions and velocities, then the
    # command and the last 12 outputs: 3 x 30 + 3 + 12
    assert contract.action.kind == 'joint_position_offset' and contract.observation_size == 105
    # 2 iterations do not walk: the verdict fails and eval exits 1
    result = _cli('eval', exported['onnx'], '--episodes', 4, '--json', cwd=tmp_path, expect=1)
    assert not result['verdict']['passed'] and 'lin_vel_error_mps' in result['verdict']['text']
    assert result['task'] == 'quadruped-flat' and result['episodes'] == 4
    for key in ('lin_vel_error_mps', 'yaw_rate_error_radps', 'fall_rate'):
        assert key in result
    assert 0.0 <= result['fall_rate'] <= 1.0
    # a FAIL names only the floors that failed
    from sim2real.verdict import Floor
    for floor in result['verdict']['floors']:
        named = f"{floor['metric']} " in result['verdict']['text']
        assert named != Floor(**floor).holds(result), (floor, result['verdict']['text'])
