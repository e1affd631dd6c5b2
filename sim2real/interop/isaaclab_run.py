"""Read an Isaac Lab rsl_rl run: what its policy was trained with, from the files Isaac Lab
writes beside the checkpoints (params/env.yaml, params/agent.yaml, model_<it>.pt).

Isaac Lab dumps its configs with PyYAML's Python tags; only the two its configs use for data
(tuples and the slices of SceneEntityCfg) are read, any other tag is refused by name. What a
policy needs to run elsewhere is taken from them: physics step and decimation, the joint
position action (scale, offset, whether the default pose is added), the default pose and the
actuator gains as Isaac Lab's joint-name patterns, the policy observation terms in order with
their scale, clip and history, and the actor network. Whatever this reader does not
understand in those parts is refused naming the field (`IsaacLabRunError`), never guessed.
Joint patterns resolve against a joint order (`resolve_joint_values`) as Isaac Lab resolves
them: a full regular-expression match, one pattern per joint.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

JOINT_POSITION_ACTION = 'isaaclab.envs.mdp.actions.joint_actions:JointPositionAction'
"""The one action term read: joint position targets = offset (+ default pose) + scale x a."""


class IsaacLabRunError(ValueError):
    """A run directory or a field of its configs this reader cannot take; says which."""


class _Loader(yaml.SafeLoader):
    """SafeLoader plus the data tags Isaac Lab's dump_yaml writes."""


_Loader.add_constructor('tag:yaml.org,2002:python/tuple',
                        lambda loader, node: tuple(loader.construct_sequence(node)))
_Loader.add_constructor('tag:yaml.org,2002:python/object/apply:builtins.slice',
                        lambda loader, node: slice(*loader.construct_sequence(node)))


def load_config(path: Path) -> dict:
    """One of Isaac Lab's dumped configs as plain data; IsaacLabRunError naming the file and
    the tag for any Python object other than a tuple or a slice."""
    try:
        data = yaml.load(Path(path).read_text(encoding='utf-8'), Loader=_Loader)
    except OSError as exc:
        raise IsaacLabRunError(f'{path}: cannot read: {exc}') from exc
    except yaml.constructor.ConstructorError as exc:
        raise IsaacLabRunError(f'{path}: {exc.problem} (only tuples and slices are read)'
                               ) from exc
    except yaml.YAMLError as exc:
        raise IsaacLabRunError(f'{path}: not YAML: {exc}') from exc
    if not isinstance(data, dict):
        raise IsaacLabRunError(f'{path}: not a config mapping')
    return data


@dataclass(frozen=True)
class ObsTerm:
    """One policy observation term as Isaac Lab computed it."""

    name: str
    """The term's name in the config (e.g. 'base_ang_vel')."""
    func: str
    """'module:function' of the term."""
    params: dict
    """Its parameters (e.g. {'command_name': 'base_velocity'})."""
    scale: float | None
    """Multiplier after the function (None: 1)."""
    clip: tuple[float, float] | None
    """(low, high) clip after scaling (None: none)."""
    history_length: int
    """Ticks stacked (0 or 1: the current one only)."""
    noise_std: float = 0.0
    """Standard deviation of the additive zero-mean noise on the unscaled value (Isaac Lab
    noises, then clips, then scales): a Gaussian's std, U(-b, b)'s b / sqrt(3)."""


@dataclass(frozen=True)
class ObservationLinkCfg:
    """How the policy's delayed terms were delivered together (sim2real.isaaclab's linked
    terms, our observation delay, jitter and dropout)."""

    delay_ticks: tuple[int, int]
    """(fewest, most) ticks of delay, per env and reset."""
    jitter_prob: float
    """Probability of one tick more at each tick."""
    dropout_prob: tuple[float, float]
    """Range of the per-env probability that the last sample is held."""


@dataclass(frozen=True)
class IsaacLabRun:
    """What an Isaac Lab rsl_rl policy was trained with."""

    run_dir: Path
    """The run directory."""
    checkpoint: Path
    """Its newest model_<iteration>.pt."""
    physics_dt_s: float
    """Simulation step [s]."""
    decimation: int
    """Physics steps per policy step."""
    urdf: str | None
    """The robot's URDF path as spawned (None: spawned from USD)."""
    default_joint_pos: dict[str, float]
    """Initial joint positions: joint-name pattern -> rad (the action's default offset)."""
    stiffness: dict[str, float]
    """Joint-name pattern -> PD stiffness [N m/rad], over every actuator group."""
    damping: dict[str, float]
    """Joint-name pattern -> PD damping [N m s/rad]."""
    action_scale: float
    """Target = offset + scale x action [rad per unit]."""
    action_offset: float
    """Constant target offset [rad]."""
    use_default_offset: bool
    """Whether the default joint positions are added to the target."""
    observations: tuple[ObsTerm, ...]
    """Policy observation terms in order."""
    actor: dict
    """The actor network config (hidden_dims, activation, obs_normalization)."""
    commands: dict[str, str]
    """Command term name -> its class_type ('module:Class')."""
    action_delay_ticks: tuple[int, int] = (0, 0)
    """The (fewest, most) policy ticks the actuators delayed the targets by."""
    observation_link: ObservationLinkCfg | None = None
    """The delay, jitter and dropout of the linked policy terms (None: none)."""

    @property
    def policy_rate_hz(self) -> float:
        """Policy steps per second."""
        return 1.0 / (self.physics_dt_s * self.decimation)


def _field(data: dict, dotted: str, where: str) -> Any:
    """data[a][b]... for 'a.b...'; IsaacLabRunError naming the file and the field."""
    value: Any = data
    for key in dotted.split('.'):
        if not isinstance(value, dict) or key not in value:
            raise IsaacLabRunError(f'{where}: no field {dotted}')
        value = value[key]
    return value


def _number(value, dotted: str, where: str) -> float:
    """A finite number (IsaacLabRunError naming the field otherwise)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise IsaacLabRunError(f'{where}: {dotted} is {value!r}, not a number')
    return float(value)


def _per_joint(value, dotted: str, where: str) -> dict[str, float]:
    """A gain given as one number or as pattern -> number, as pattern -> number."""
    if isinstance(value, dict):
        return {str(k): _number(v, f'{dotted}.{k}', where) for k, v in value.items()}
    return {'.*': _number(value, dotted, where)}


def _actions(env: dict, where: str) -> tuple[float, float, bool]:
    """(scale, offset, use_default_offset) of the one joint position action term."""
    actions = _field(env, 'actions', where)
    terms = {k: v for k, v in (actions or {}).items() if v is not None}
    if len(terms) != 1:
        raise IsaacLabRunError(f'{where}: actions has terms {sorted(terms)}; one joint '
                               'position action is read')
    (name, term), = terms.items()
    if term.get('class_type') != JOINT_POSITION_ACTION:
        raise IsaacLabRunError(f'{where}: actions.{name}.class_type is '
                               f'{term.get("class_type")!r}; only {JOINT_POSITION_ACTION}')
    if term.get('clip') is not None:
        raise IsaacLabRunError(f'{where}: actions.{name}.clip {term["clip"]!r}: clipped '
                               'actions are not read')
    if term.get('joint_names') not in (['.*'], '.*'):
        raise IsaacLabRunError(f'{where}: actions.{name}.joint_names '
                               f'{term.get("joint_names")!r}: only every joint (".*")')
    scale = _number(term.get('scale'), f'actions.{name}.scale', where)
    offset = _number(term.get('offset', 0.0), f'actions.{name}.offset', where)
    return scale, offset, bool(term.get('use_default_offset', False))


LINKED_TERM = 'sim2real.isaaclab.observation_link:LinkedTerm'
"""Our wrapper of an Isaac Lab observation function delivered with our delay, jitter and
dropout (the function and its noise are its params)."""


def _linked(term: dict, dotted: str, where: str) -> tuple[dict, ObservationLinkCfg | None]:
    """A term with a linked term's function, params and noise unwrapped, and its link (None
    for another term)."""
    if term['func'] != LINKED_TERM:
        return term, None
    params = dict(term.get('params') or {})
    try:
        link = ObservationLinkCfg(
            tuple(int(v) for v in params['delay_ticks']), float(params['jitter_prob']),
            tuple(float(v) for v in params['dropout_prob']))
        inner = {**term, 'func': str(params['func']), 'params': params['func_params'],
                 'noise_std': float(params['noise_std'])}
    except (KeyError, TypeError, ValueError) as err:
        raise IsaacLabRunError(f'{where}: {dotted}.params: not those of a linked term '
                               f'({err})') from err
    if term.get('noise') is not None:
        raise IsaacLabRunError(f'{where}: {dotted}.noise: a linked term noises itself')
    return inner, link


def _term_noise(term: dict, link, corrupted: bool, dotted: str, where: str) -> float:
    """A term's noise std on its unscaled value: a linked term's own, else Isaac Lab's
    (none when the group's corruption is off)."""
    if link is not None:
        return term['noise_std']
    return _noise_std(term.get('noise'), f'{dotted}.noise', where) if corrupted else 0.0


def _observations(env: dict, where: str) -> tuple[tuple[ObsTerm, ...],
                                                  ObservationLinkCfg | None]:
    """The policy group's terms in order, with their processing, and the link of its linked
    terms (IsaacLabRunError when two differ)."""
    group = _field(env, 'observations.policy', where)
    if not group.get('concatenate_terms', True):
        raise IsaacLabRunError(f'{where}: observations.policy.concatenate_terms is false')
    if group.get('history_length') not in (None, 0, 1):
        raise IsaacLabRunError(f'{where}: observations.policy.history_length '
                               f'{group["history_length"]}: a group-wide history is not read')
    if group.get('history_order', 'term') != 'term':
        raise IsaacLabRunError(f'{where}: observations.policy.history_order '
                               f'{group["history_order"]!r}: only "term" is read')
    corrupted = bool(group.get('enable_corruption', True))   # False: noise never applied
    out = []
    links = set()
    for name, term in group.items():
        if not isinstance(term, dict):
            continue
        dotted = f'observations.policy.{name}'
        if 'func' not in term:
            raise IsaacLabRunError(f'{where}: {dotted} has no func')
        term, link = _linked(term, dotted, where)
        links.add(link)
        if term.get('modifiers'):
            raise IsaacLabRunError(f'{where}: {dotted}.modifiers: not read')
        if term.get('delay_max_lag', 0):
            raise IsaacLabRunError(f'{where}: {dotted}.delay_max_lag: delayed terms not read')
        if (term.get('history_length') or 0) > 1 and not term.get('flatten_history_dim', True):
            raise IsaacLabRunError(f'{where}: {dotted}.flatten_history_dim false: an '
                                   'unflattened history is not read')
        scale = term.get('scale')
        if scale is not None and not isinstance(scale, (int, float)):
            raise IsaacLabRunError(f'{where}: {dotted}.scale {scale!r}: per-element scales '
                                   'are not read')
        clip = term.get('clip')
        out.append(ObsTerm(name, str(term['func']), dict(term.get('params') or {}),
                           None if scale is None else float(scale),
                           None if clip is None else (float(clip[0]), float(clip[1])),
                           int(term.get('history_length') or 0),
                           _term_noise(term, link, corrupted, dotted, where)))
    links.discard(None)
    if len(links) > 1:
        raise IsaacLabRunError(f'{where}: observations.policy: linked terms with different '
                               f'links {sorted(map(str, links))}')
    return tuple(out), (links.pop() if links else None)


UNIFORM_NOISE = 'isaaclab.utils.noise.noise_model:uniform_noise'
"""Additive uniform noise (Isaac Lab's Unoise): read when centred on zero."""
GAUSSIAN_NOISE = 'isaaclab.utils.noise.noise_model:gaussian_noise'
"""Additive Gaussian noise (Isaac Lab's Gnoise): read when its mean is zero."""


def _noise_std(noise, dotted: str, where: str) -> float:
    """The std of an additive zero-mean uniform or Gaussian noise config (0: no noise)."""
    if noise is None:
        return 0.0
    known = isinstance(noise, dict) and noise.get('func') in (UNIFORM_NOISE, GAUSSIAN_NOISE)
    if not known or noise.get('operation', 'add') != 'add':
        raise IsaacLabRunError(f'{where}: {dotted} {noise!r}: only additive uniform or '
                               f'Gaussian noise ({UNIFORM_NOISE}, {GAUSSIAN_NOISE}) is read')
    if noise['func'] == GAUSSIAN_NOISE:
        mean = _number(noise.get('mean', 0.0), f'{dotted}.mean', where)
        if mean != 0.0:
            raise IsaacLabRunError(f'{where}: {dotted}.mean {mean}: only zero-mean noise is read')
        return _number(noise.get('std'), f'{dotted}.std', where)
    low = _number(noise.get('n_min'), f'{dotted}.n_min', where)
    high = _number(noise.get('n_max'), f'{dotted}.n_max', where)
    if not math.isclose(low, -high):
        raise IsaacLabRunError(f'{where}: {dotted} ({low}, {high}): only noise centred on '
                               'zero is read')
    return high / math.sqrt(3.0)   # U(-b, b) has std b / sqrt(3)


def _group_gains(actuator: dict, dotted: str, key: str, where: str) -> dict[str, float]:
    """Pattern -> gain of one actuator group: a single number applies to each of its
    joint_names_expr patterns, a mapping gives its own patterns."""
    value = actuator.get(key)
    if isinstance(value, dict):
        return _per_joint(value, dotted, where)
    number = _number(value, dotted, where)
    return {pattern: number for pattern in actuator.get('joint_names_expr') or []}


def _delay_ticks(actuators: dict, decimation: int) -> tuple[int, int]:
    """(fewest, most) policy ticks of target delay over the actuator groups: ours
    (sim2real.isaaclab.actuators: min/max_delay_ticks) or Isaac Lab's delayed PD (min/max_delay
    in physics steps, rounded out to whole ticks); (0, 0) for undelayed groups."""
    def ticks(actuator: dict) -> tuple[int, int]:
        if 'max_delay_ticks' in actuator:
            return int(actuator.get('min_delay_ticks') or 0), int(actuator['max_delay_ticks'])
        if 'max_delay' in actuator:
            return (int(actuator.get('min_delay') or 0) // decimation,
                    -(-int(actuator['max_delay']) // decimation))
        return 0, 0
    pairs = [ticks(a) for a in actuators.values()] or [(0, 0)]
    return min(low for low, _ in pairs), max(high for _, high in pairs)


def _commands(env: dict) -> dict[str, str]:
    """Command term name -> class_type of the env config's commands."""
    commands = env.get('commands') or {}
    return {str(name): str(term.get('class_type')) for name, term in commands.items()
            if isinstance(term, dict)}


def newest_checkpoint(run_dir: Path) -> Path:
    """The model_<iteration>.pt with the highest iteration."""
    found = [(int(m.group(1)), p) for p in Path(run_dir).glob('model_*.pt')
             if (m := re.fullmatch(r'model_(\d+)\.pt', p.name))]
    if not found:
        raise IsaacLabRunError(f'{run_dir}: no model_<iteration>.pt checkpoint')
    return max(found)[1]


def read_run(run_dir: str | Path) -> IsaacLabRun:
    """The training facts of an Isaac Lab rsl_rl run directory."""
    run_dir = Path(run_dir)
    env_path, agent_path = run_dir / 'params' / 'env.yaml', run_dir / 'params' / 'agent.yaml'
    env, agent = load_config(env_path), load_config(agent_path)
    where = str(env_path)
    robot = _field(env, 'scene.robot', where)
    stiffness: dict[str, float] = {}
    damping: dict[str, float] = {}
    actuators = _field(robot, 'actuators', where) or {}
    for group, actuator in actuators.items():
        dotted = f'scene.robot.actuators.{group}'
        for key, out in (('stiffness', stiffness), ('damping', damping)):
            out.update(_group_gains(actuator, f'{dotted}.{key}', key, where))
    scale, offset, use_default = _actions(env, where)
    spawn = robot.get('spawn') or {}
    actor = _field(agent, 'actor', str(agent_path))
    decimation = int(_number(_field(env, 'decimation', where), 'decimation', where))
    observations, link = _observations(env, where)
    return IsaacLabRun(
        run_dir=run_dir, checkpoint=newest_checkpoint(run_dir),
        physics_dt_s=_number(_field(env, 'sim.dt', where), 'sim.dt', where),
        decimation=decimation,
        urdf=spawn.get('asset_path') if str(spawn.get('asset_path', '')).endswith(
            '.urdf') else None,
        default_joint_pos=_per_joint(_field(robot, 'init_state.joint_pos', where),
                                     'scene.robot.init_state.joint_pos', where),
        stiffness=stiffness, damping=damping, action_scale=scale, action_offset=offset,
        use_default_offset=use_default, observations=observations, actor=actor,
        commands=_commands(env), action_delay_ticks=_delay_ticks(actuators, decimation),
        observation_link=link)


def resolve_joint_values(patterns: dict[str, float], joint_names: list[str],
                         default: float | None = None, what: str = 'value') -> list[float]:
    """Per joint in joint_names, the value of the one pattern that fully matches its name (as
    Isaac Lab resolves joint-name patterns); default where none matches, or IsaacLabRunError
    when default is None; IsaacLabRunError for a joint two patterns match."""
    out = []
    for joint in joint_names:
        hits = [p for p in patterns if re.fullmatch(p, joint)]
        if len(hits) > 1:
            raise IsaacLabRunError(f'{what}: joint "{joint}" matches patterns {hits}')
        if not hits:
            if default is None:
                raise IsaacLabRunError(f'{what}: no pattern matches joint "{joint}"')
            out.append(default)
            continue
        out.append(patterns[hits[0]])
    return out
