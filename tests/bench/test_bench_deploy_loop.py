"""The deploy-loop bench's window schedule: our node without and with its recorder in
back-to-back pairs whose order alternates, the anchors only in the first rounds."""

import pytest

from bench.deploy_loop import _window_ratios, deploy_loop, round_kinds


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
