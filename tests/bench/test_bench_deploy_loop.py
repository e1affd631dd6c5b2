"""The deploy-loop bench's window schedule: our node without and with its recorder in
back-to-back pairs whose order alternates, the anchors only in the first rounds."""

import numpy as np
import pytest

from bench.deploy_loop import (
    _pooled_p99_ms, _window_ratios, deploy_loop, round_kinds, stolen, STOLEN_SHARE)


def test_pairs_alternate_their_order_and_the_anchors_run_only_in_the_first_rounds():
    """Round 0 measures without then with the recorder, round 1 the other way round; the
    anchors follow in the first `repeats` rounds only, so 10 pairs cost 20 windows plus
    2 x repeats, not 4 x 10."""
    schedule = [round_kinds(i, repeats=2) for i in range(4)]
    assert schedule[0] == ['policy_node', 'policy_node_recording', 'plain_rclpy',
                           'plain_rclpy_single']
    assert schedule[1] == ['policy_node_recording', 'policy_node', 'plain_rclpy',
                           'plain_rclpy_single']
    assert schedule[2] == ['policy_node', 'policy_node_recording']
    assert schedule[3] == ['policy_node_recording', 'policy_node']


def test_the_paired_ratios_skip_a_window_without_a_figure():
    """A failed window (no p99) drops its pair, never divides by zero."""
    with_runs = [{'period_error_p99_ms': 0.6}, {'error': 'node died'},
                 {'period_error_p99_ms': 0.3}]
    without_runs = [{'period_error_p99_ms': 0.4}, {'period_error_p99_ms': 0.5},
                    {'period_error_p99_ms': 0.3}]
    assert _window_ratios(with_runs, without_runs) == pytest.approx([1.5, 1.0])


@pytest.mark.parametrize('repeats, pairs', [(0, 10), (5, 0), (-1, 3)])
def test_zero_or_negative_counts_are_refused_before_anything_runs(repeats, pairs):
    """No window, no policy export: the counts are checked first."""
    with pytest.raises(ValueError, match='at least 1'):
        deploy_loop(repeats=repeats, pairs=pairs)


def test_the_pooled_p99_counts_every_tick_of_every_window_and_takes_the_arrays_out():
    """Two windows of 1000 ticks, one clean (errors 0.01 ms) and one with 30 ticks late by
    2 ms: per window p99s would be 0.01 and 2 ms; over the 2000 ticks, 30 late ones are
    1.5 %, so the pooled p99 is 2 ms, and with only 10 late (0.5 %) it is the clean 0.01 ms.
    The per-tick arrays leave the runs (they are not JSON)."""
    clean = np.full(1000, 0.01)
    late = np.concatenate([np.full(970, 0.01), np.full(30, 2.0)])
    runs = [{'period_errors_ms': clean}, {'period_errors_ms': late}, {'error': 'no node'}]
    assert _pooled_p99_ms(runs) == (pytest.approx(2.0), 2000)
    assert all('period_errors_ms' not in run for run in runs)
    fewer = np.concatenate([np.full(990, 0.01), np.full(10, 2.0)])
    p99, ticks = _pooled_p99_ms([{'period_errors_ms': clean}, {'period_errors_ms': fewer}])
    assert p99 == pytest.approx(0.01) and ticks == 2000
    assert _pooled_p99_ms([{'error': 'no node'}]) is None


def test_a_window_the_host_withheld_cpu_time_from_is_stolen():
    """Past STOLEN_SHARE of steal a window is measured again; a window without the figure
    (a machine without /proc/stat's steal) is not."""
    assert stolen({'host_steal_share': 0.05})
    assert not stolen({'host_steal_share': STOLEN_SHARE / 2})
    assert not stolen({})
