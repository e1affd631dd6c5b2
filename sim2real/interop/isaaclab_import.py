"""Turn an Isaac Lab rsl_rl run into our policy.onnx: the run's actor behind our contract.

The contract is the one our task gives its robot (same URDF, rates, action interface, gains,
default pose), with the policy observations as Isaac Lab computed them: each Isaac Lab term
mapped to ours of the same quantity, units and frame (`TERM_NAMES`), in Isaac Lab's order,
with its scale, clip, noise and history. Whatever differs from our robot or task is refused
naming the item (`IsaacLabRunError`): an Isaac Lab term with no counterpart, a joint missing
on either side, another decimation, physics step, action scale, default pose or gain. Two
things are
reordered inside the graph: the joints (per-joint inputs gathered from our joint order into
the run's articulation order, the actions put back into ours) and the history (Isaac Lab
stacks a term's past oldest first, we newest first), so the file reads and writes as every
other policy of the task does.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from pathlib import Path

import torch
import yaml
from torch import nn

from sim2real.contract import Contract, file_sha256, ObservationTermSpec
from sim2real.export.onnx_policy import export_onnx, verify_onnx
from sim2real.interop.isaaclab_run import (
    IsaacLabRun, IsaacLabRunError, ObsTerm, read_run, resolve_joint_values)
from sim2real.isaaclab.layout import isaaclab_to_ours
from sim2real.sim.joint_robot import movable_joints

log = logging.getLogger(__name__)

_OBS = 'isaaclab.envs.mdp.observations:'
_SENSORS = 'sim2real.isaaclab.sensors:'
TERM_NAMES = {
    _OBS + 'base_lin_vel': 'lin_vel_b',
    _OBS + 'base_ang_vel': 'ang_vel_b',
    _OBS + 'projected_gravity': 'projected_gravity',
    _OBS + 'generated_commands': 'velocity_command',
    _OBS + 'joint_pos_rel': 'joint_pos_rel',
    _OBS + 'joint_vel_rel': 'joint_vel',
    _OBS + 'last_action': 'action_history',
    _SENSORS + 'imu_ang_vel': 'ang_vel_b',
    _SENSORS + 'imu_projected_gravity': 'projected_gravity',
    _SENSORS + 'joint_pos_rel_measured': 'joint_pos_rel',
}
"""Isaac Lab observation function -> our term of the same quantity (body-frame base
velocities [m/s, rad/s], gravity direction in the body frame, (vx, vy, yaw rate) command,
joint positions from the default pose [rad], joint velocities [rad/s] (Isaac Lab's relative to
a zero default), the policy's last output); our Isaac Lab env's sensor readings
(sim2real.isaaclab.sensors: IMU frame, encoder offsets) map to ours, which read the same."""
VELOCITY_COMMAND = 'isaaclab.envs.mdp.commands.velocity_command:UniformVelocityCommand'
"""The command term generated_commands may read: (vx, vy, yaw rate) in the heading frame."""
MATCH_TOL = 1e-6
"""Largest difference between the run's and our task's numbers taken as equal."""


@dataclass(frozen=True)
class ImportResult:
    """What import_isaaclab_run wrote and checked."""

    path: Path
    contract: Contract
    joint_order: list[str]
    """The run's articulation order."""
    max_abs_diff: float
    """onnxruntime against the run's actor on the same inputs."""


def urdf_joint_order(urdf: str | Path) -> list[str]:
    """The movable joints of a URDF in file order: the articulation order Isaac Lab 3.0's
    URDF importer gives a robot spawned from that file (measured on urdf/quadruped.urdf)."""
    return list(movable_joints(urdf))


def _activation(name: str) -> nn.Module:
    """The torch module of an rsl_rl activation name."""
    table = {'elu': nn.ELU, 'relu': nn.ReLU, 'selu': nn.SELU, 'tanh': nn.Tanh,
             'sigmoid': nn.Sigmoid, 'lrelu': nn.LeakyReLU, 'softplus': nn.Softplus,
             'gelu': nn.GELU, 'identity': nn.Identity}
    if name not in table:
        raise IsaacLabRunError(f'actor.activation "{name}": not one of {sorted(table)}')
    return table[name]()


def load_actor(run: IsaacLabRun) -> tuple[nn.Module, int]:
    """The run's deterministic actor (normalizer, MLP) from its checkpoint; its input width."""
    state = torch.load(run.checkpoint, map_location='cpu', weights_only=False)
    actor_state = state.get('actor_state_dict') if isinstance(state, dict) else None
    if actor_state is None:
        raise IsaacLabRunError(f'{run.checkpoint}: no actor_state_dict (rsl_rl 5 checkpoint)')
    if run.actor.get('class_name', 'MLPModel') != 'MLPModel':
        raise IsaacLabRunError(f'actor.class_name "{run.actor["class_name"]}": only MLPModel')
    dims = list(run.actor.get('hidden_dims') or [])
    layers = sorted(int(k.split('.')[1]) for k in actor_state
                    if k.startswith('mlp.') and k.endswith('.weight'))
    if len(layers) != len(dims) + 1:
        raise IsaacLabRunError(f'{run.checkpoint}: {len(layers)} linear layers for '
                               f'hidden_dims {dims}')
    modules: list[nn.Module] = []
    for i, index in enumerate(layers):
        weight = actor_state[f'mlp.{index}.weight']
        linear = nn.Linear(weight.shape[1], weight.shape[0])
        linear.load_state_dict({'weight': weight, 'bias': actor_state[f'mlp.{index}.bias']})
        modules.append(linear)
        if i < len(dims):
            modules.append(_activation(str(run.actor.get('activation', 'elu'))))
    width = modules[0].in_features
    if run.actor.get('obs_normalization'):
        mean = actor_state.get('obs_normalizer._mean')
        std = actor_state.get('obs_normalizer._std')
        if mean is None or std is None:
            raise IsaacLabRunError(f'{run.checkpoint}: obs_normalization without '
                                   'obs_normalizer._mean/_std')
        modules.insert(0, _Normalize(mean.reshape(-1), std.reshape(-1), eps=1e-2))
    return nn.Sequential(*modules).eval(), width


class _Normalize(nn.Module):
    """rsl_rl's EmpiricalNormalization at inference: (x - mean) / (std + eps)."""

    def __init__(self, mean: torch.Tensor, std: torch.Tensor, eps: float):
        """Frozen statistics."""
        super().__init__()
        self.register_buffer('mean', mean.float())
        self.register_buffer('denominator', std.float() + eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(x - mean) / (std + eps)."""
        return (x - self.mean) / self.denominator


class ReorderedActor(nn.Module):
    """Our observation layout in, our joint order out: gather the inputs into the run's
    order, run its actor, put its outputs back into our joint order."""

    def __init__(self, actor: nn.Module, input_index: list[int], output_index: list[int]):
        """input_index[k]: our input feeding the run's input k; output_index[j]: the run's
        output that is our joint j's."""
        super().__init__()
        self.actor = actor
        self.register_buffer('input_index', torch.as_tensor(input_index, dtype=torch.long))
        self.register_buffer('output_index', torch.as_tensor(output_index, dtype=torch.long))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """Actions in our joint order."""
        return self.actor(obs.index_select(1, self.input_index)).index_select(
            1, self.output_index)


def _term_spec(term: ObsTerm) -> ObservationTermSpec:
    """Our contract term for one Isaac Lab term (size filled in from our env)."""
    where = f'observations.policy.{term.name}'
    if term.func not in TERM_NAMES:
        raise IsaacLabRunError(f'{where}: Isaac Lab term {term.func} has no counterpart here '
                               f'(mapped: {", ".join(sorted(TERM_NAMES))})')
    name = TERM_NAMES[term.func]
    extra = {k: v for k, v in term.params.items() if k not in ('asset_cfg', 'command_name')}
    if extra:
        raise IsaacLabRunError(f'{where}.params {sorted(extra)}: not read')
    scale = 1.0 if term.scale is None else term.scale
    if not scale > 0.0:
        raise IsaacLabRunError(f'{where}.scale {scale}: only positive scales are read')
    clip = None
    if term.clip is not None:
        low, high = term.clip
        if not math.isclose(low, -high):
            raise IsaacLabRunError(f'{where}.clip {term.clip}: only symmetric clips are read')
        clip = high * scale   # Isaac Lab clips, then scales; we scale, then clip
    noise_std = term.noise_std * scale   # ours is in scaled units
    return ObservationTermSpec(name=name, size=0, scale=scale, clip=clip,
                               noise_std=noise_std,
                               history_length=max(1, term.history_length))


def _check_robot(run: IsaacLabRun, ours: Contract, joint_order: list[str]) -> None:
    """Refuse a run whose rates, joints, action, default pose or gains differ from ours."""
    if not math.isclose(1.0 / run.physics_dt_s, ours.physics_rate_hz, rel_tol=MATCH_TOL):
        raise IsaacLabRunError(f'sim.dt {run.physics_dt_s} s: task "{ours.task}" steps its '
                               f'physics at {1.0 / ours.physics_rate_hz:g} s')
    if not math.isclose(run.policy_rate_hz, ours.policy_rate_hz, rel_tol=MATCH_TOL):
        raise IsaacLabRunError(
            f'decimation {run.decimation} ({run.policy_rate_hz:g} Hz policy): task '
            f'"{ours.task}" runs its policy at {ours.policy_rate_hz:g} Hz (decimation '
            f'{round(ours.physics_rate_hz / ours.policy_rate_hz)})')
    for joint in joint_order:
        if joint not in ours.joint_names:
            raise IsaacLabRunError(f'joint "{joint}" of the run is not a joint of our robot '
                                   f'"{ours.robot}" ({", ".join(ours.joint_names)})')
    for joint in ours.joint_names:
        if joint not in joint_order:
            raise IsaacLabRunError(f'joint "{joint}" of our robot "{ours.robot}" is not in '
                                   f'the joints of the run ({", ".join(joint_order)})')
    params = ours.action.params
    if not run.use_default_offset or abs(run.action_offset) > MATCH_TOL:
        raise IsaacLabRunError('actions: targets must be the default pose + scale x action '
                               f'(use_default_offset {run.use_default_offset}, offset '
                               f'{run.action_offset})')
    if abs(run.action_scale - params['scale']) > MATCH_TOL:
        raise IsaacLabRunError(f'actions scale {run.action_scale}: task "{ours.task}" scales '
                               f'its actions by {params["scale"]}')
    names = ours.joint_names
    checks = (('scene.robot.init_state.joint_pos', run.default_joint_pos,
               ours.default_joint_pos_rad, 0.0),
              ('stiffness', run.stiffness, params['kp_nm_per_rad'], None),
              ('damping', run.damping, params['kd_nm_s_per_rad'], None))
    for what, patterns, expected, default in checks:
        values = resolve_joint_values(patterns, names, default=default, what=what)
        for joint, got, want in zip(names, values, expected):
            if abs(got - want) > MATCH_TOL:
                raise IsaacLabRunError(f'{what} of joint "{joint}": {got:g} in the run, '
                                       f'{want:g} on our robot "{ours.robot}"')


def _indices(specs: list[ObservationTermSpec], ours: list[str],
             theirs: list[str]) -> list[int]:
    """For each input of the run's layout, the index of our input holding that value
    (history oldest first and joints in the articulation's order there)."""
    return isaaclab_to_ours([(s.name, s.size, s.history_length) for s in specs], ours, theirs)


def _spawned_urdf(run: IsaacLabRun, urdf: str | Path | None, ours: Contract) -> Path | None:
    """The URDF file the run spawned (urdf: where it is now, else the run's path), refused
    unless it is our task's; None when the run spawned USD or the file is not here."""
    path = Path(urdf) if urdf is not None else (Path(run.urdf) if run.urdf else None)
    if path is None or not path.is_file():
        if urdf is not None:
            raise IsaacLabRunError(f'--urdf {urdf}: no such file')
        return None
    if file_sha256(path) != ours.urdf_sha256:
        raise IsaacLabRunError(f'scene.robot.spawn.asset_path {path}: not the URDF of task '
                               f'"{ours.task}" (SHA-256 {file_sha256(path)[:12]}, ours '
                               f'{ours.urdf_sha256[:12]})')
    return path


def import_isaaclab_run(run_dir: str | Path, task: str, out: str | Path | None = None,
                        joint_order: list[str] | None = None,
                        urdf: str | Path | None = None) -> ImportResult:
    """Write the run's newest checkpoint as an ONNX policy of our task (default
    RUN_DIR/policy.onnx) and verify it against the run's actor. joint_order: the run's
    articulation order, by default the order of the URDF it spawned (urdf: where that file is
    now, if not at the run's recorded path), which must be our task's."""
    from sim2real.mdp.contract import contract_from_env
    from sim2real.training import build_env
    run = read_run(run_dir)
    env = build_env(task, seed=0, num_envs=1, num_threads=1)
    ours = contract_from_env(env)
    spawned = _spawned_urdf(run, urdf, ours)
    recorded = Path(run_dir) / 'params' / 'joint_names.yaml'
    if joint_order is None and recorded.is_file():
        joint_order = [str(j) for j in yaml.safe_load(recorded.read_text())]
    if joint_order is None:
        if spawned is None:
            raise IsaacLabRunError(
                'the articulation joint order: the run spawned its robot from '
                f'{run.urdf or "USD"}, which is not here; give the joint order '
                "(--joint-order; Isaac Lab prints it as env.scene['robot'].joint_names) or "
                'where the URDF is now (--urdf)')
        joint_order = urdf_joint_order(spawned)
    for name, class_type in run.commands.items():
        used = any(t.params.get('command_name') == name for t in run.observations)
        if used and class_type != VELOCITY_COMMAND:
            raise IsaacLabRunError(f'commands.{name}.class_type {class_type}: only '
                                   f'{VELOCITY_COMMAND} is read')
    _check_robot(run, ours, list(joint_order))
    specs = [_term_spec(t) for t in run.observations]
    env = build_env(task, seed=0, num_envs=1, num_threads=1, observations=specs)
    contract = contract_from_env(env)
    contract.robot_params['imported_from'] = 'isaaclab'
    # what the run trained with, not our task's randomization: its actuators' target delay
    # (none for Isaac Lab's own DC motor) and its linked terms' delay, jitter and dropout
    # (Isaac Lab's own per-term delays are refused above)
    contract.action.params['delay_ticks_trained'] = list(run.action_delay_ticks)
    link = run.observation_link
    contract.robot_params['observation_delay_ticks_trained'] = (
        list(link.delay_ticks) if link is not None else [0, 0])
    for key in ('observation_jitter_prob_trained', 'observation_dropout_prob_trained'):
        contract.robot_params.pop(key, None)
    if link is not None and (link.jitter_prob > 0.0 or link.dropout_prob[1] > 0.0):
        contract.robot_params['observation_jitter_prob_trained'] = link.jitter_prob
        contract.robot_params['observation_dropout_prob_trained'] = list(link.dropout_prob)
    contract.robot_params['isaaclab_checkpoint'] = str(run.checkpoint.name)
    contract.robot_params['isaaclab_joint_order'] = list(joint_order)
    actor, width = load_actor(run)
    if width != contract.observation_size:
        raise IsaacLabRunError(f'the actor reads {width} values; the observation terms of the '
                               f'run make {contract.observation_size} here')
    policy = ReorderedActor(actor, _indices(contract.observations, ours.joint_names,
                                            list(joint_order)),
                            [list(joint_order).index(j) for j in ours.joint_names]).eval()
    path = Path(out) if out is not None else Path(run_dir) / 'policy.onnx'
    export_onnx(policy, contract, path)
    max_abs = verify_onnx(policy, path)
    log.info('imported %s as %s (task %s); onnxruntime vs torch max |diff| = %.3g',
             run.checkpoint, path, task, max_abs)
    return ImportResult(path, contract, list(joint_order), max_abs)
