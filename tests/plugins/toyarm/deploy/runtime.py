"""toyarm's runtime entry: the generic joint chain plus a reach-target part, and the deploy
observation term its task adds ('target_pos_b')."""

from __future__ import annotations

from functools import partial

import numpy as np

from sim2real.deploy.runtime.integrators import JOINT_POSITION_KINDS
from sim2real.deploy.runtime.joints import check_joint_params, JointProfile
from sim2real.deploy.runtime.observations import register_term
from sim2real.deploy.runtime.parts import PartBase
from sim2real.deploy.runtime.profile import RobotRuntime
from sim2real.deploy.runtime.sensors import SensorStore, Watchdog

from toyarm.deploy.params import ToyArmParams
from toyarm.kinematics import tip_pos_b


class ReachTargetPart(PartBase):
    """The target stream: its watchdog, and the target the term reads (before the first
    message: the tip at the rest pose, so the policy holds still)."""

    def __init__(self, contract, params: ToyArmParams):
        """Stream shapes and watchdog from params; the rest pose's tip from the contract."""
        self.shapes = {'target': {'pos_b': (2,)}}
        self.watchdogs = [Watchdog('target', params.target_timeout_s, 'target_timeout_s',
                                   params.target_topic)]
        links = contract.robot_params['link_lengths_m']
        self.rest_tip_b = tip_pos_b(np.asarray(contract.default_joint_pos_rad), *links)

    def observation_inputs(self, store: SensorStore, now_s: float) -> dict:
        """target_pos_b [m; base frame xy]."""
        target = store.value('target', 'pos_b')
        return {'target_pos_b': self.rest_tip_b if target is None else target}


register_term('target_pos_b', lambda s: s['target_pos_b'], 2)

RUNTIME = RobotRuntime(
    params_cls=ToyArmParams,
    make_profile=partial(JointProfile, parts=(ReachTargetPart,)),
    check_params=check_joint_params,
    command_interfaces={'joint_position': JOINT_POSITION_KINDS},
)
