"""`sim2real list` (tasks, HIL robots, shipped policies) and `sim2real inspect` (a policy's
contract as tables)."""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path
import re

from sim2real.cli.output import figure, table

log = logging.getLogger('sim2real')

_JSON_BLOCK = re.compile(r'```json\n(\{.*?\})\n```', re.S)


def policy_folder() -> Path | None:
    """The shipped policies/ folder (a checkout's), or None."""
    from sim2real.assets import asset_dirs
    return next((d for d in asset_dirs('policies') if d.is_dir()), None)


def card_figures(card: Path) -> dict:
    """The first evaluation JSON a policy card holds ({} without a card or one)."""
    if not card.is_file():
        return {}
    for block in _JSON_BLOCK.findall(card.read_text(encoding='utf-8')):
        try:
            data = json.loads(block)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict) and 'verdict' in data:
            return data
    return {}


def headline(figures: dict) -> str:
    """The figures a task's eval floors judge, with the episode count: 'success_rate 1
    (256 episodes)'."""
    floors = figures.get('verdict', {}).get('floors', [])
    shown = [f'{f["metric"]} {figure(figures.get(f["metric"]))}' for f in floors]
    if not shown:
        return '-'
    return ', '.join(shown) + f' ({figures.get("episodes", "?")} episodes)'


def shipped_policies() -> list[dict]:
    """Each policies/*.onnx: file, task, headline figure from its card, card path."""
    folder = policy_folder()
    if folder is None:
        return []
    from sim2real.onnx_io import read_contract
    found = []
    for path in sorted(folder.glob('*.onnx')):
        card = path.with_suffix('.md')
        try:
            task = read_contract(path).task
        except ValueError as exc:   # altered or foreign: listed as such
            task = f'unreadable: {exc}'
        found.append({'file': str(path), 'task': task,
                      'headline': headline(card_figures(card)),
                      'card': str(card) if card.is_file() else None})
    return found


def catalog() -> dict:
    """Tasks, HIL robots and shipped policies, as `sim2real list` shows them."""
    from sim2real.deploy.robots import robot_names
    from sim2real.hil.runner import params_path
    from sim2real.tasks import get_task, task_names
    tasks = [{'name': name, 'algorithm': get_task(name).train.algo,
              'actions': list(get_task(name).actions),
              'description': get_task(name).description} for name in task_names()]
    robots = []
    for name in robot_names():
        try:
            params = str(params_path(name))
        except FileNotFoundError:
            params = None
        robots.append({'robot': name, 'params': params})
    return {'tasks': tasks, 'robots': robots, 'policies': shipped_policies()}


def catalog_view(data: dict) -> str:
    """The catalog as three tables."""
    tasks = table([(t['name'], t['algorithm'], ', '.join(t['actions']), t['description'])
                   for t in data['tasks']], ('task', 'algorithm', 'actions', 'description'),
                  wrap_last=True)
    robots = table([(r['robot'], r['params'] or 'no parameter file') for r in data['robots']],
                   ('HIL robot', 'parameters'))
    policies = table([(p['file'], p['task'], p['headline'], p['card'])
                      for p in data['policies']],
                     ('shipped policy', 'task', 'eval headline', 'card'))
    return '\n\n'.join([tasks, robots, policies if data['policies'] else 'no shipped policies'])


def inspect_policy(path: str) -> dict:
    """The contract of an ONNX policy after its digest verified, with the digest's record."""
    from sim2real.contract_digest import stored_graph_sha256
    from sim2real.onnx_io import load_model, read_contract
    if not Path(path).is_file():
        raise FileNotFoundError(f'policy file {path} does not exist')
    contract = read_contract(path)   # ContractError names an altered field
    model = load_model(path)
    return {'policy': path, 'digest': 'verified: the contract is bound to this graph',
            'graph_sha256': stored_graph_sha256(model, path),
            'producer': model.producer_name or '-',
            'contract': dataclasses.asdict(contract)}


def _per_joint(contract: dict) -> tuple[list[str], list[list]]:
    """Columns of values given once per joint (gains, limits, default pose)."""
    joints = contract['joint_names']
    columns = {'default_rad': contract['default_joint_pos_rad']}
    for source in (contract['action']['params'], contract['robot_params']):
        for key, value in source.items():
            if (isinstance(value, list) and len(value) == len(joints)
                    and value not in columns.values()):
                columns[key] = value
    rows = [[i, name, *(values[i] for values in columns.values())]
            for i, name in enumerate(joints)]
    return ['#', 'joint', *columns], rows


def _flat(params: dict, prefix: str = '') -> list[tuple[str, object]]:
    """(dotted key, value) of nested parameter dicts."""
    rows = []
    for key, value in params.items():
        if isinstance(value, dict):
            rows += _flat(value, f'{prefix}{key}.')
        else:
            rows.append((f'{prefix}{key}', value))
    return rows


def inspect_view(data: dict) -> str:
    """The contract as a readable page: identity, rates, joints, observations, action,
    training box and the remaining robot parameters."""
    c = data['contract']
    obs = c['observations']
    lines = [table([('policy', data['policy']), ('digest', data['digest']),
                    ('graph sha256', data['graph_sha256']), ('task', c['task']),
                    ('robot', c['robot']), ('policy rate', f'{c["policy_rate_hz"]:g} Hz'),
                    ('physics rate', f'{c["physics_rate_hz"]:g} Hz'),
                    ('normalizer', c['normalizer']), ('contract version', c['version'])],
                   ('field', 'value'))]
    if c['joint_names']:
        headers, rows = _per_joint(c)
        lines += ['', f'joints, in the policy\'s order ({len(c["joint_names"])})',
                  table(rows, headers)]
    lines += ['', f'observations ({sum(t["size"] * t["history_length"] for t in obs)} inputs)',
              table([(t['name'], t['size'], t['history_length'], t['scale'], t['clip'],
                      t['noise_std']) for t in obs],
                    ('term', 'size', 'history', 'scale', 'clip', 'noise_std'))]
    action = c['action']
    per_joint = len(c['joint_names']) or -1
    params = [(key, value) for key, value in action['params'].items()
              if not (isinstance(value, list) and len(value) == per_joint)
              and not key.endswith('_trained')]
    trained = [(key, value) for key, value in action['params'].items()
               if key.endswith('_trained')]
    lines += ['', f'action: {action["kind"]}, {action["size"]} outputs, clip {action["clip"]:g}',
              table(params, ('parameter', 'value'), wrap_last=True)]
    robot = [(key, value) for key, value in _flat(c['robot_params'])
             if not (isinstance(value, list) and len(value) == per_joint)]
    box = trained + [(k, v) for k, v in robot if k.endswith('_trained')]
    rest = [(k, v) for k, v in robot if not k.endswith('_trained')]
    if box:
        lines += ['', 'training box (what the policy saw in training)',
                  table(box, ('parameter', 'value'), wrap_last=True)]
    if rest:
        lines += ['', 'robot parameters', table(rest, ('parameter', 'value'), wrap_last=True)]
    return '\n'.join(lines)
