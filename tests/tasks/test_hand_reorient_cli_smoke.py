"""hand-reorient end to end through the CLI: train 2 iterations, export, evaluate."""

from sim2real.export.onnx_policy import read_contract
from tests.tasks.test_quadruped_cli_smoke import _cli


def test_train_export_eval_hand_reorient(tmp_path):
    """16 envs x 2 iterations train, export with a verified ONNX whose contract lists the
    tracker terms and the cube's rest position, and evaluate 4 episodes: the JSON reports
    goals_per_minute, consecutive_successes with their median, drop_rate; an untrained
    policy fails the 7.5 goals-per-minute floor and eval exits 1."""
    run = tmp_path / 'run'
    summary = _cli('train', 'hand-reorient', '--run-dir', run, '--num-envs', 16,
                   '--max-iterations', 2, '--threads', 1, '--no-progress', '--json',
                   cwd=tmp_path)
    assert summary['task'] == 'hand-reorient' and summary['env_steps'] == 2 * 32 * 16
    exported = _cli('export', run, '--samples', 100, '--band-samples', 512, '--json',
                    cwd=tmp_path)
    assert exported['max_abs_diff'] < 1e-5
    contract = read_contract(exported['onnx'])
    assert contract.observation_size == 111
    assert [t.name for t in contract.observations][2:] == [
        'tracked_cube_pos', 'tracked_cube_rot6', 'tracked_goal_rot6']
    assert len(contract.robot_params['object_rest_pos_m']) == 3
    result = _cli('eval', exported['onnx'], '--episodes', 4, '--json', cwd=tmp_path, expect=1)
    assert not result['verdict']['passed'] and 'goals_per_minute' in result['verdict']['text']
    assert result['episodes'] == 4
    for key in ('goals_per_minute', 'consecutive_successes', 'consecutive_p50_successes',
                'drop_rate', 'time_to_fall'):
        assert key in result, key
    assert result['goals_per_minute'] < 7.5
