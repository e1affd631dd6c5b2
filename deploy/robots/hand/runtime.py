"""The hand's runtime entry: the generic joint chain (its delta integrator, joint limits,
target slew cap, torque limit through the PD model, stale and NaN joint states, hold
fallback) plus the fingertip guard and, for policies that observe the cube, its tracked
pose and goal (the observation terms hand-reorient trained with)."""

from __future__ import annotations

from functools import partial

import numpy as np

from sim2real import terms
from sim2real.assets import urdf_path
from sim2real.contract import Contract, ContractError
from sim2real.deploy.robots.hand.params import HandParams
from sim2real.deploy.runtime.integrators import JOINT_POSITION_KINDS
from sim2real.deploy.runtime.joints import check_joint_params, JointProfile
from sim2real.deploy.runtime.legged_kinematics import LeggedKinematics
from sim2real.deploy.runtime.observations import register_term
from sim2real.deploy.runtime.params import ParamError
from sim2real.deploy.runtime.parts import PartBase
from sim2real.deploy.runtime.profile import RobotRuntime
from sim2real.deploy.runtime.sensors import quat_norm, SensorStore, Watchdog


class FingertipGuardPart(PartBase):
    """Pinocchio forward kinematics of the measured joints every tick: the fallback latches
    ('fingertips') when two fingertip pads come closer than min_fingertip_distance_m or one
    leaves the workspace box (the URDF root frame: the palm-up mount's)."""

    def __init__(self, contract: Contract, params: HandParams):
        """Kinematics of the URDF in contract joint order, the contract's fingertip frames."""
        tips = contract.robot_params.get('fingertip_names')
        if not tips:
            raise ContractError('robot_params.fingertip_names: required by the fingertip guard')
        low = np.asarray(params.workspace_min_m, dtype=np.float64)
        high = np.asarray(params.workspace_max_m, dtype=np.float64)
        if low.shape != (3,) or high.shape != (3,) or not np.all(low < high):
            raise ParamError('parameters "workspace_min_m", "workspace_max_m": must be 3 values '
                             f'each with min < max, got {list(low)}, {list(high)}')
        if not params.min_fingertip_distance_m >= 0.0:
            raise ParamError('parameter "min_fingertip_distance_m": must be >= 0, got '
                             f'{params.min_fingertip_distance_m}')
        try:
            self.kinematics = LeggedKinematics(urdf_path(params.urdf_file),
                                               list(contract.joint_names), tips)
        except ValueError as exc:
            raise ContractError(f'robot_params.fingertip_names: {exc}') from exc
        self.low_m, self.high_m = low, high
        self.min_distance_m = params.min_fingertip_distance_m
        self.fingertips_m = np.full((len(tips), 3), np.nan)
        """The latest fingertip positions [m; URDF root frame], (k, 3); NaN before a check."""
        self.closest_now_m = np.nan
        """Smallest distance between two fingertip pads at the last check [m]."""
        self.closest_since_enable_m = np.inf
        """Smallest such distance over the checks since the node was armed [m]."""

    def check(self, q: np.ndarray) -> str:
        """'' when the fingertips of joint positions q are safe, else why not."""
        tips = self.kinematics.foot_positions_b(q)
        self.fingertips_m = tips
        self.closest_now_m = float(terms.closest_pair_distance(tips))
        self.closest_since_enable_m = min(self.closest_since_enable_m, self.closest_now_m)
        if bool(terms.outside_box(tips, self.low_m, self.high_m)):   # as the training's guard
            return 'fingertips'
        if self.min_distance_m > 0.0 and self.closest_now_m < self.min_distance_m:
            return 'fingertips'
        return ''

    def on_enable(self, store: SensorStore, now_s: float) -> None:
        """Restart the closest-pads figure."""
        self.closest_since_enable_m = np.inf

    def latch_reason(self, store: SensorStore, now_s: float, profile) -> str:
        """'fingertips' when the measured joints put a fingertip out of bounds."""
        if store.latest('joint_state') is None:
            return ''
        q, _ = profile.joint_state(store)
        return self.check(q) if np.all(np.isfinite(q)) else ''


TRACKER_TERMS = {
    'tracked_cube_pos': (lambda s: s['tracked_object_pos_rel_m'], 3),
    'tracked_cube_rot6': (lambda s: terms.rotmat_6d(s['tracked_object_quat_wxyz']), 6),
    'tracked_goal_rot6': (lambda s: terms.relative_rot6(s['tracked_object_quat_wxyz'],
                                                        s['goal_quat_wxyz']), 6),
}
"""Observation terms of the tracked object (tasks/hand/reorient_mdp.py computes them in
training from the same sim2real.terms functions): name -> (function of the inputs, size)."""
for _name, (_func, _size) in TRACKER_TERMS.items():
    register_term(_name, _func, _size)


class ObjectTrackerPart(PartBase):
    """The tracked pose of the held object and its goal, when the contract observes them:
    the 'object_pose' stream (stale after object_pose_timeout_s: the fallback latches) and
    the 'goal' stream (the identity orientation until the first goal)."""

    def __init__(self, contract: Contract, params: HandParams):
        """Active when a contract term reads the tracker; the object's rest position from
        robot_params.object_rest_pos_m."""
        self.active = any(t.name in TRACKER_TERMS for t in contract.observations)
        """Whether the policy observes the object (the node subscribes to its streams)."""
        self.rest_pos_m = np.zeros(3)
        if self.active:
            rest = contract.robot_params.get('object_rest_pos_m')
            if not (isinstance(rest, list) and len(rest) == 3):
                raise ContractError('robot_params.object_rest_pos_m: required by the tracked '
                                    f'object terms, 3 values [m], got {rest!r}')
            if not params.object_pose_timeout_s > 0.0:
                raise ParamError('parameter "object_pose_timeout_s": must be > 0 for a policy '
                                 f'that observes the object, got {params.object_pose_timeout_s}')
            self.rest_pos_m = np.asarray(rest, dtype=np.float64)
        self.shapes = {'object_pose': {'pos_m': (3,), 'quat_wxyz': (4,)},
                       'goal': {'quat_wxyz': (4,)}}
        self.watchdogs = [Watchdog('object_pose',
                                   params.object_pose_timeout_s if self.active else 0.0,
                                   'object_pose_timeout_s', params.object_pose_topic)]

    def observation_inputs(self, store: SensorStore, now_s: float) -> dict:
        """tracked_object_pos_rel_m [m], tracked_object_quat_wxyz and goal_quat_wxyz (unit;
        the object at rest and the identity before their first samples)."""
        identity = np.array([1.0, 0.0, 0.0, 0.0])
        pos = store.value('object_pose', 'pos_m')
        quat = store.value('object_pose', 'quat_wxyz')
        goal = store.value('goal', 'quat_wxyz')
        return {'tracked_object_pos_rel_m': np.zeros(3) if pos is None else pos - self.rest_pos_m,
                'tracked_object_quat_wxyz': identity if quat is None else quat / quat_norm(quat),
                'goal_quat_wxyz': identity if goal is None else goal / quat_norm(goal)}


PARTS = (FingertipGuardPart, ObjectTrackerPart)
"""What the hand composes onto the joint chain, in latch order."""


def check_hand_params(contract: Contract, params: HandParams, model=None) -> None:
    """The joint chain's checks; a positive servo torque constant."""
    check_joint_params(contract, params, model)
    if not params.torque_constant_nm_per_a > 0.0:
        raise ParamError('parameter "torque_constant_nm_per_a": must be > 0 N m/A, got '
                         f'{params.torque_constant_nm_per_a}')


RUNTIME = RobotRuntime(
    params_cls=HandParams,
    make_profile=partial(JointProfile, parts=PARTS),
    check_params=check_hand_params,
    command_interfaces={'joint_position': JOINT_POSITION_KINDS},
)
