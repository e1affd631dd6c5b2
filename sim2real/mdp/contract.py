"""Derive a policy's deployment contract from the environment it was trained in.

Every scene describes its robot (`sim2real.mdp.scene.Scene`): ``robot_name``,
``urdf_sha256`` and ``robot_description()``, a dict of ``joint_names`` (policy order; empty
for a robot without joints), ``default_joint_pos_rad`` (same order) and ``robot_params``
(nominal mass, PD gains, torque limits, rotor model, ...).
"""

from __future__ import annotations

import dataclasses
import inspect

from sim2real.contract import Contract, ContractError, ObservationTermSpec
from sim2real.mdp.cfg import EnvCfg
from sim2real.mdp.ranges import bounds
from sim2real.mdp.scene import Scene


def contract_from_env(env) -> Contract:
    """The contract of env's policy observation group and action term."""
    group = env.cfg.observations['policy']
    sizes = env.observations.term_sizes['policy']
    observations = [
        ObservationTermSpec(name=name, size=sizes[name], scale=term.scale, clip=term.clip,
                            noise_std=term.noise_std if group.add_noise else 0.0,
                            history_length=term.history_length,
                            doc=inspect.getdoc(term.func) or '')
        for name, term in group.terms.items()]
    scene = env.scene
    if not isinstance(scene, Scene):
        raise TypeError(f'task "{env.cfg.task}": its scene {type(scene).__name__} lacks the '
                        'Scene interface (robot_name, urdf_sha256, robot_description())')
    robot = scene.robot_description()
    robot_params = dict(robot['robot_params'])
    robot_params['observation_delay_ticks_trained'] = [
        int(round(b)) for b in bounds(group.delay_ticks)]
    if group.jitter_prob > 0.0 or bounds(group.dropout_prob)[1] > 0.0:
        robot_params['observation_jitter_prob_trained'] = group.jitter_prob
        robot_params['observation_dropout_prob_trained'] = list(bounds(group.dropout_prob))
    return Contract(
        task=env.cfg.task,
        robot=scene.robot_name,
        urdf_sha256=scene.urdf_sha256,
        policy_rate_hz=1.0 / env.step_dt_s,
        physics_rate_hz=1.0 / env.cfg.physics_dt_s,
        joint_names=[str(name) for name in robot['joint_names']],
        default_joint_pos_rad=[float(q) for q in robot['default_joint_pos_rad']],
        observations=observations,
        action=env.action_term.spec(),
        robot_params=robot_params,
    )


def set_policy_layout(cfg: EnvCfg, specs: list[ObservationTermSpec]) -> None:
    """Make cfg's policy group the layout specs list (a policy from elsewhere, e.g. Isaac
    Lab, reading the task's quantities in its own order, scales, clips, noise and history).

    Each term is the task's own term of that name, from its policy group or else from its
    critic group (there a privileged quantity: the true base velocity where the robot would
    estimate it); ContractError naming a term the task does not compute."""
    groups = cfg.observations
    sources = {**groups['critic'].terms, **groups['policy'].terms} if 'critic' in groups \
        else dict(groups['policy'].terms)
    terms = {}
    for spec in specs:
        if spec.name not in sources:
            raise ContractError(f'observation term "{spec.name}": task "{cfg.task}" does not '
                                f'compute it (its terms: {", ".join(sorted(sources))})')
        terms[spec.name] = dataclasses.replace(
            sources[spec.name], scale=spec.scale, clip=spec.clip, noise_std=spec.noise_std,
            history_length=spec.history_length)
    groups['policy'].terms = terms
