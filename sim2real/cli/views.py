"""Text views of results for people: a header line and aligned tables (JSON is --json's)."""

from __future__ import annotations

from sim2real.cli.output import metrics_table, scalars, table

EVAL_CONTEXT = ('task', 'policy', 'source', 'checkpoint', 'seed', 'randomization', 'backend',
                'device', 'verdict', 'warnings', 'video')
HIL_CONTEXT = ('robot', 'policy', 'domain_id', 'logs', 'nominal_floors', 'faults', 'verdict',
               'records', 'truth_records', 'node_ood_share')
TRAIN_HIDDEN = ('segments',)
MAX_FAILING_POINTS = 10
"""Failing robustness points listed by name (robustness.json holds all)."""


def eval_view(result: dict) -> str:
    """Which policy ran how, then each figure beside its floor."""
    get = result.get
    source = get('checkpoint') or get('source', '-')
    head = (f'eval {get("task")}: {get("policy", "-")} ({source}), {get("episodes", "?")} '
            f'episodes, seed {get("seed", "-")}, randomization: {get("randomization", "-")}, '
            f'{get("backend", "-")} on {get("device", "-")}')
    lines = [head, '', metrics_table(result, result['verdict']['floors'], EVAL_CONTEXT)]
    if result.get('video'):
        lines += ['', f'video: {result["video"]}']
    return '\n'.join(lines)


def hil_view(result: dict) -> str:
    """The nominal flight's figures, then one row per scenario with its outcome (an
    identification run: what it did and its one row)."""
    head = (f'hil {result["robot"]}: {result["policy"]} (ROS domain {result["domain_id"]}, '
            f'node logs in {result["logs"]})')
    rows = [(s['name'], _expectation(s['line']), _outcome(s), s['line'].partition(': ')[2])
            for s in result['verdict']['scenarios']]
    figures = (f'identification run, {result["excitation_s"]:.1f} s: {result["excitation"]}'
               if result.get('scenario') == 'identify' else
               metrics_table(result, result['nominal_floors'], HIL_CONTEXT))
    lines = [head, '', figures, '',
             table(rows, ('scenario', 'expected', 'result', 'detail'), wrap_last=True)]
    flagged = {k: v for k, v in result.get('node_ood_share', {}).items() if v > 0}
    if flagged:
        lines += ['', "outside the training band in the nominal flight's last window: " +
                  ', '.join(f'{name} {share:.0%}' for name, share in flagged.items())]
    if result.get('records'):
        lines += ['', 'flight records (sim2real replay FILE): ' + ', '.join(result['records']),
                  'ground truth and events: ' + ', '.join(result.get('truth_records', []))]
    return '\n'.join(lines)


def gap_view(result, log: str) -> str:
    """The gap per signal (replay and holding errors, their ratio) and overall."""
    changed = result.params
    rows = [(name, s.unit, f'{s.rms:.4g}', f'{s.held_rms:.4g}', f'{s.normalized:.3f}')
            for name, s in result.signals.items()]
    return '\n'.join([
        f'gap {log}: {result.task}, {result.windows} windows of {result.window_s:g} s, '
        + ('parameters ' + ', '.join(f'{k} {v:g}' for k, v in changed.items())
           if changed else 'nominal parameters'), '',
        table(rows, ('signal', 'unit', 'replay RMS', 'held RMS', 'gap')), '',
        f'gap {result.gap:.3f} (0: the simulator matches the log; 1: no better than '
        'holding each signal at its value at the start of the window)'])


def _outcome(scenario: dict) -> str:
    """'pass', 'FAIL', or 'unjudged' for a scenario that could not be judged."""
    if scenario['passed']:
        return 'pass'
    return 'unjudged' if scenario.get('inconclusive') else 'FAIL'


def _expectation(line: str) -> str:
    """'latch' of 'pass frozen_imu (latch): ...'; 'fly' for the nominal run."""
    head = line.partition(': ')[0]
    return head[head.rindex('(') + 1:-1] if head.endswith(')') else 'fly'


def hil_verdict_text(verdict: dict) -> str:
    """'pass: all 11 scenarios pass', 'FAIL: 2 of 11 scenarios fail: a, b' (and any that
    could not be judged), or 'INCONCLUSIVE: ...' when nothing failed but some could not be
    judged."""
    scenarios = verdict['scenarios']
    failed = [s['name'] for s in scenarios if not s['passed'] and not s.get('inconclusive')]
    unjudged = [s['name'] for s in scenarios if s.get('inconclusive')]
    if not failed and not unjudged:
        return f'pass: all {len(scenarios)} scenarios pass'
    why = 'a stalled machine disturbed every attempt'
    if not failed:
        passed = len(scenarios) - len(unjudged)
        return (f'INCONCLUSIVE: {len(unjudged)} of {len(scenarios)} scenarios could not be '
                f'judged ({why}): {", ".join(unjudged)}'
                + (f'; the other {passed} pass' if passed else ''))
    text = f'FAIL: {len(failed)} of {len(scenarios)} scenarios fail: {", ".join(failed)}'
    if unjudged:
        text += f'; {len(unjudged)} could not be judged ({why}): {", ".join(unjudged)}'
    return text


def robustness_view(report: dict) -> str:
    """Points per kind and how many pass, then the failing points with why."""
    kinds = {}
    for point in report['points']:
        kinds.setdefault(point['kind'], []).append(point['passed'])
    rows = [(kind, len(outcomes), sum(outcomes), len(outcomes) - sum(outcomes))
            for kind, outcomes in kinds.items()]
    head = (f'robustness {report["task"]}: {report["policy"]}, {len(report["points"])} points '
            f'x {report["episodes_per_point"]} episodes, seed {report["seed"]}')
    lines = [head, '', table(rows, ('kind', 'points', 'pass', 'fail'))]
    failed = [p for p in report['points'] if not p['passed']]
    if failed:
        rows = [(p['kind'], p['label'], p['verdict'].removeprefix('FAIL: '))
                for p in failed[:MAX_FAILING_POINTS]]
        lines += ['', table(rows, ('kind', 'failing point', 'why'), wrap_last=True)]
        if len(failed) > MAX_FAILING_POINTS:
            lines.append(f'... and {len(failed) - MAX_FAILING_POINTS} more failing points '
                         '(robustness.json lists all)')
    if report.get('files'):
        lines += ['', f'report: {report["files"]["markdown"]}']
    return '\n'.join(lines)


def robustness_verdict_text(report: dict) -> str:
    """'pass: 40 of 40 points meet their floors' or 'FAIL: 3 of 40 points miss their
    floors: corner 2, past_edge 1'."""
    total = len(report['points'])
    failed = {}
    for point in report['points']:
        if not point['passed']:
            failed[point['kind']] = failed.get(point['kind'], 0) + 1
    if not failed:
        return f'pass: {total} of {total} points meet their floors'
    kinds = ', '.join(f'{kind} {count}' for kind, count in failed.items())
    return f'FAIL: {sum(failed.values())} of {total} points miss their floors: {kinds}'


def replay_view(summary: dict) -> str:
    """What was replayed and how the decisions compare."""
    which = ('the logged policy' if summary['same_policy'] else
             f'another policy ({summary["policy_sha256"][:12]}; logged '
             f'{summary["logged_policy_sha256"][:12]})')
    rows = [(key, summary[key]) for key in (
        'ticks', 'max_abs_command_diff', 'max_abs_action_diff', 'max_abs_observation_diff',
        'first_state_mismatch_tick', 'first_state_mismatch')]
    lines = [f'replay {summary["log"]} with {which}', '', table(rows, ('figure', 'value'))]
    if summary['ood_banded']:
        band = [(name, f'{share:.2%}', '-' if name not in summary['ood_first_s'] else
                 f'{summary["ood_first_s"][name]:.3f}')
                for name, share in summary['ood_share'].items()]
        lines += ['', f'training band ({summary["policy_ticks"]} ticks with an observation):',
                  table(band, ('term', 'ticks outside', 'first outside [s after arm]'))]
    else:
        lines += ['', 'training band: the policy carries none; `sim2real export POLICY.onnx '
                      '--out BANDED.onnx` measures it, `--policy BANDED.onnx` replays with it']
    for text in summary['call_mismatches']:
        lines.append(f'enable answered otherwise: {text}')
    if summary['damage']:
        lines.append(f'log cut short: {summary["damage"]}')
    if summary.get('report'):
        lines.append(f'report: {summary["report"][0]} ({len(summary["report"]) - 1} plots)')
    return '\n'.join(lines)


def replay_verdict(summary: dict, tolerance: float) -> tuple[bool, str]:
    """Same policy: pass when every command is within tolerance and every state, latch and
    enable answer is the same (FAIL naming what differs); another policy: a comparison."""
    if summary['ticks'] == 0:
        return False, 'FAIL: the log holds no control tick'
    if not summary['same_policy']:
        return True, (f'compared: another policy would have commanded up to '
                      f'{summary["max_abs_command_diff"]:.4g} off the logged commands over '
                      f'{summary["ticks"]} ticks')
    failed = []
    if not summary['max_abs_command_diff'] <= tolerance:
        failed.append(f'commands differ by up to {summary["max_abs_command_diff"]:.4g} '
                      f'(> {tolerance:g})')
    if summary['first_state_mismatch_tick'] is not None:
        failed.append(f'state differs first at {summary["first_state_mismatch"]}')
    if summary['call_mismatches']:
        failed.append(f'{len(summary["call_mismatches"])} enable answers differ')
    if failed:
        return False, 'FAIL: ' + '; '.join(failed)
    return True, (f'pass: {summary["ticks"]} ticks decided again exactly (commands within '
                  f'{summary["max_abs_command_diff"]:.3g}, every state and latch the same)')


def train_view(summary: dict, run_dir: str) -> str:
    """The run's figures and where to look next."""
    lines = [f'train {summary["task"]}: {run_dir}', '',
             table(scalars(summary, TRAIN_HIDDEN), ('field', 'value')), '',
             f'curves: {run_dir}/curves.png; TensorBoard: tensorboard --logdir {run_dir}/tb',
             f'next: sim2real export {run_dir}']
    return '\n'.join(lines)
