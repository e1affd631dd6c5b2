"""hand-reorient: turn the cube to random goal orientations, seen through a pose tracker.

After MuJoCo Playground's ``LeapCubeReorient`` (hand.md 1a, 4.2) on the hand-rotate model,
action and randomization, with these choices:

- the policy reads the cube from a tracker whose refresh period (1-4 ticks: 20-5 Hz),
  latency (0-2 ticks: 0-100 ms) and noise are randomized (DeXtreme: refresh every 1-6 ticks
  at 30 Hz, i.e. 30-5 Hz; Playground: 2 cm and 0.1 rad of noise; its real camera ran at
  15 Hz), plus hand-rotate's proprioception (3 ticks of joints and targets);
- goals uniform on SO(3), at least 90 degrees from the cube, reached within 0.1 rad (``goal``);
- rewards as Isaac Lab's and DeXtreme's: 1 / (angle + 0.1), 250 per goal, -10 x the cube's
  distance from the palm centre, hand-rotate's effort terms and drop penalty;
- an episode ends at a drop, where the deploy's fingertip guard would latch (hand-rotate's
  termination), after 8 s without a goal (DeXtreme's reset time; a truncation), at 50 goals
  (Isaac Lab) or after 50 s (Playground's 1000 steps at 20 Hz).

The delta integrator is hand-rotate's, 1/24 rad per step (0.83 rad/s; HORA's and LEAP's,
validated on the real hand), so one parameter file (config/hand.yaml, its slew cap above
that rate) deploys both tasks. Playground's reorientation moves 0.5 rad per step (10 rad/s);
hand.md section 4.1 asks for well below.
"""

from __future__ import annotations

from sim2real.mdp import episode_terms
from sim2real.mdp.cfg import (
    EnvCfg, EventTermCfg, ObsTermCfg, RandomParamCfg, RewardTermCfg, TermClassCfg,
    TerminationTermCfg)
from sim2real.tasks.hand import mdp, reorient_mdp as rmdp
from sim2real.tasks.hand.cfg import hand_rotate_cfg, randomization_box
from sim2real.tasks.hand.goal import CubeGoal, draw_first_goal
from sim2real.tasks.hand.metrics import ReorientMetrics
from sim2real.tasks.hand.tracking import TrackedCubeScene

SUCCESS_TOLERANCE_RAD = 0.1
"""A goal is reached within this angle (simulation; 0.4 rad on real hands) [rad]."""
GOAL_TIMEOUT_S = 8.0
"""An episode ends after this long without a goal [s] (DeXtreme's resetTime)."""
MAX_SUCCESSES = 50
"""An episode ends at this many goals (Isaac Lab's max_consecutive_success)."""
TRACKER_POS_NOISE_M = 0.01
"""Tracker position noise, per coordinate [m] (Playground: up to 2 cm)."""
TRACKER_ROT_NOISE_RAD = 0.05
"""Tracker orientation noise, per rotation-vector component [rad] (about 0.09 rad of angle;
Playground adds N(0, 0.1) to the quaternion's components)."""


def _tracker_terms() -> dict[str, ObsTermCfg]:
    """The policy's view of the cube: tracked position (3), orientation (6) and its rotation
    from the goal (6), after hand-rotate's 96 proprioceptive inputs: 111."""
    return {
        'tracked_cube_pos': ObsTermCfg(rmdp.tracked_cube_pos, scale=10.0),
        'tracked_cube_rot6': ObsTermCfg(rmdp.tracked_cube_rot6),
        'tracked_goal_rot6': ObsTermCfg(rmdp.tracked_goal_rot6),
    }


def _reorient_rewards() -> dict[str, RewardTermCfg]:
    """Orientation shaping, the goal bonus, centring, effort, drops (x dt per step)."""
    return {
        'orientation': RewardTermCfg(rmdp.orientation_inverse, 1.0, {'eps_rad': 0.1}),
        'goal': RewardTermCfg(rmdp.goal_reached, 250.0),
        'cube_distance': RewardTermCfg(rmdp.cube_distance, -10.0),
        'pose': RewardTermCfg(mdp.pose_deviation_l2, -0.1),
        'torques': RewardTermCfg(mdp.joint_torques_l2, -0.1),
        'work': RewardTermCfg(mdp.work_l2, -0.1),
        'drop': RewardTermCfg(episode_terms.is_terminated, -200.0),
    }


def reorient_randomization_box() -> dict[str, RandomParamCfg]:
    """hand-rotate's box plus the tracker's refresh period and latency."""
    return {
        **randomization_box(),
        'tracker_refresh_ticks': RandomParamCfg('scene.tracker_refresh_ticks', 1.0,
                                                'ticks (50 ms)', integer=True,
                                                source='[DX]: refresh every 1-6 steps'),
        'tracker_latency_ticks': RandomParamCfg('scene.tracker_latency_ticks', 0.0,
                                                'ticks (50 ms)', integer=True,
                                                source='[DX]: cube pose delay'),
    }


def hand_reorient_cfg(play: bool = False, action: str | None = None) -> EnvCfg:
    """Turn the cube to random goal orientations: hand-rotate's hand, integrator, rates,
    randomization and play mode, with the tracked cube, the goal and their terms."""
    cfg = hand_rotate_cfg(play, action)
    cfg.task = 'hand-reorient'
    cfg.scene = TermClassCfg(TrackedCubeScene, {
        **cfg.scene.params, 'tracker_refresh_ticks': (1, 4), 'tracker_latency_ticks': (0, 2),
        'tracker_pos_noise_m': 0.0 if play else TRACKER_POS_NOISE_M,
        'tracker_rot_noise_rad': 0.0 if play else TRACKER_ROT_NOISE_RAD})
    cfg.observations['policy'].terms.update(_tracker_terms())
    critic = cfg.observations['critic'].terms
    critic.pop('cube_rotation_rate')
    critic.update({'goal_rot6': ObsTermCfg(rmdp.goal_rot6),
                   'goal_error': ObsTermCfg(rmdp.goal_error)})
    cfg.rewards = _reorient_rewards()
    cfg.terminations.update({
        'goal_timeout': TerminationTermCfg(rmdp.goal_timeout, {'timeout_s': GOAL_TIMEOUT_S},
                                           time_out=True),
        'max_successes': TerminationTermCfg(rmdp.max_successes, {'count': MAX_SUCCESSES},
                                            time_out=True)})
    # after reset_grasp places the cube: relabel it, then draw the first goal from it
    cfg.events['relabel_cube'] = EventTermCfg(rmdp.relabel_cube, 'reset')
    cfg.events['first_goal'] = EventTermCfg(draw_first_goal, 'reset', {'command': 'goal'})
    cfg.commands = {'goal': TermClassCfg(CubeGoal, {
        'success_tolerance_rad': SUCCESS_TOLERANCE_RAD})}
    cfg.metrics = TermClassCfg(ReorientMetrics, {'command': 'goal',
                                                 'min_goals_per_minute': 7.5})
    cfg.randomization = reorient_randomization_box()
    cfg.episode_length_s = 50.0
    return cfg
