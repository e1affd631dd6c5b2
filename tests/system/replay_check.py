"""A recorded flight's exact replay, checked through the real CLI (shared by the HIL tests)."""

from __future__ import annotations

from pathlib import Path

from tests.system.test_cli import json_line, run_cli


def assert_replays_exactly(folder: Path, cut_short: bool = False) -> dict:
    """`sim2real replay FOLDER --json`: same policy, every command, action and observation
    within 1e-6, no state, latch or enable answer different, the log whole (or, cut_short,
    damaged where reading stopped); the summary."""
    proc = run_cli('replay', folder, '--json', cwd=folder)
    result = json_line(proc.stdout)
    assert result['same_policy'] and result['ticks'] > 100
    assert (result['damage'] is not None) == cut_short, result['damage']
    assert result['max_abs_command_diff'] <= 1e-6 and result['max_abs_action_diff'] <= 1e-6
    assert result['max_abs_observation_diff'] <= 1e-6
    assert result['first_state_mismatch_tick'] is None and result['call_mismatches'] == []
    assert 'verdict replay: pass: ' in proc.stderr
    assert_every_ros_message_decodes(folder)
    return result


def assert_every_ros_message_decodes(folder: Path) -> None:
    """Every CDR message of the recording decodes, with the standard mcap-ros2 decoder, to a
    message of its schema's type (the last part of e.g. sensor_msgs/msg/JointState)."""
    from sim2real.deploy.record.rebuild import read_logs
    from sim2real.deploy.record.reader import decode
    contents = read_logs(folder)
    ros = [m for m in contents.messages if m.encoding == 'cdr']
    assert len(ros) > 100
    for message in ros:
        value = decode(message, contents)
        assert type(value).__name__ == message.schema_name.rsplit('/', 1)[-1], message.topic
