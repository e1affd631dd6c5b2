"""The quadruped's velocity task as an Isaac Lab 3.0 manager-based env (Isaac Lab venv only).

Built from the run's task file (our env config, contract and training settings as plain
data), so the numbers are the ones `cfg.py` gives our MuJoCo task: the same URDF, default
pose, PD gains and DC-motor torque-speed limits (`isaaclab.actuators.DCMotorCfg` is the same
model as our scene's), rates, command ranges, action scale and clip, policy observations in
our order with our scales, Gaussian noise and history, rewards (with our only-positive clip),
terminations and the randomization. Each of our terms is mapped by name; a term with no
mapping is refused, never dropped in silence, except those in NOT_IN_ISAACLAB, which are
logged at build (Isaac Lab has no such term; the contract records what was trained).

Our observation history is newest first, Isaac Lab's oldest first: `sim2real
import-isaaclab` reorders it inside the exported graph, so the ONNX file reads our layout.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path

log = logging.getLogger(__name__)

NOT_IN_ISAACLAB = {
    'observations.critic': 'the critic reads the (noisy) policy group and the true base '
                           'velocity; Isaac Lab has no physical_params term',
    'train.edge_prob, train.corner_prob': 'every env draws the box uniformly (no edge or '
                                          'corner bias)',
    'ppo.critic_warmup_iterations, policy.obs_clip, policy.actor_output_gain':
        'rsl_rl has no such settings',
}
"""Our quadruped settings this env does not reproduce, with the reason (logged at build)."""
RESET_CLEARANCE_M = 0.02
"""Height above the standing height at which a reset drops the base [m] (the default of
events.reset_base's clearance_m)."""
CONTACT_N = 1.0
"""Contact force above which a body counts as touching [N] (Isaac Lab's velocity task)."""
USED_PARAMS = {
    'rewards.track_lin_vel_xy': {'std_m_s'}, 'rewards.track_ang_vel_z': {'std_rad_s'},
    'rewards.feet_air_time': {'threshold_s'}, 'rewards.joint_pos_limits': {'soft_ratio'},
    'rewards.base_height': {'target_m'}, 'terminations.bad_orientation': {'limit_rad'},
    'terminations.base_too_low': {'min_height_m'},
    'events.foot_friction': {'friction_range'}, 'events.base_mass': {'mass_range_kg'},
    'events.base_com': {'offset_m'}, 'events.link_masses': {'scale_range'},
    'events.pd_gains': {'kp_scale', 'kd_scale'},
    'events.reset_base': {'offset_m', 'lin_vel_m_s', 'ang_vel_rad_s', 'clearance_m'},
    'events.reset_joints': {'scale_range'}, 'events.push_base': {'lin_vel_m_s'},
    'events.motor_strength': {'strength_range'}, 'events.encoder_bias': {'bias_rad'},
    'events.imu_mount': {'max_tilt_rad'},
}
"""The parameters of our terms that the mapped Isaac Lab terms take; any other is refused
(a changed min_command_m_s, say, would otherwise be dropped)."""
FEET = '.*_foot'
THIGHS_CALVES = '.*_(thigh|calf)'
BASE = 'base_link'


def _check_params(where: str, params: dict) -> dict:
    """params, refused naming the key when one is not taken by the mapped Isaac Lab term."""
    extra = sorted(set(params) - USED_PARAMS.get(where, set()))
    if extra:
        raise ValueError(f'{where}.params {extra}: not taken by the Isaac Lab term it maps to')
    return params


def _mapped(group: str, out, terms: dict, table: dict, make):
    """out (an Isaac Lab terms config) holding only our terms of group, each built as
    make(our term, *table[name](params)); a term with no mapping is refused by name, one in
    NOT_IN_ISAACLAB skipped."""
    for name in list(vars(out)):
        setattr(out, name, None)
    for name, term in terms.items():
        where = f'{group}.{name}'
        if where in NOT_IN_ISAACLAB:
            continue
        if name not in table:
            raise ValueError(f'{where}: no Isaac Lab term is mapped')
        setattr(out, name, make(term, *table[name](_check_params(where, term['params']))))
    return out


def _int_range(value) -> tuple[int, int]:
    """A whole-number (low, high) from a plain range ([low, high] or an edge-range dict)."""
    low, high = _uniform(value)
    return int(round(low)), int(round(high))


def _uniform(pair) -> tuple[float, float]:
    """A (low, high) pair from plain data ([low, high] or an edge-range dict)."""
    if isinstance(pair, dict):
        pair = (pair['low'], pair['high'])
    low, high = pair
    return float(low), float(high)


def _scene(task: dict, run_dir: Path, num_envs: int):
    """Our URDF on a local plane, DC-motor PD actuators (the URDF's stall torques, no-load
    speeds and rotor armature per joint, and our action delay in policy ticks, one draw per
    env), a contact sensor on every body."""
    from isaaclab.assets import ArticulationCfg
    from sim2real.isaaclab.actuators import DelayedDCMotorCfg
    from sim2real.isaaclab.scene import ground_plane_usd, urdf_spawn
    from sim2real.urdf import read_motors
    from isaaclab_tasks.core.velocity.velocity_env_cfg import MySceneCfg
    contract = task['contract']
    params = task['env']['scene']['params']
    limits = contract['robot_params']
    joints = contract['joint_names']
    scene = MySceneCfg(num_envs=num_envs, env_spacing=2.5)
    scene.terrain.terrain_type = 'usd'
    scene.terrain.terrain_generator = None
    scene.terrain.usd_path = str(ground_plane_usd(run_dir / 'usd' / 'ground.usda'))
    scene.terrain.visual_material = None
    scene.sky_light = None
    scene.height_scanner = None
    scene.contact_forces.prim_path = '{ENV_REGEX_NS}/Robot/.*'   # URDF links nest

    events, rewards = task['env']['events'], task['env']['rewards']
    clearance_m = float(events.get('reset_base', {}).get('params', {}).get(
        'clearance_m', RESET_CLEARANCE_M))
    soft_ratio = float(rewards.get('joint_pos_limits', {}).get('params', {}).get(
        'soft_ratio', 0.9))   # our joint_pos_limits' default
    motors = read_motors(task['urdf'], joints)   # (stall torque, no-load speed, armature)
    delay = _int_range(task['env']['action']['params'].get('delay_ticks') or (0, 0))
    scene.robot = ArticulationCfg(
        prim_path='{ENV_REGEX_NS}/Robot',
        spawn=urdf_spawn(task['urdf'], run_dir / 'usd'),
        init_state=ArticulationCfg.InitialStateCfg(
            pos=(0.0, 0.0, float(limits['nominal_base_height_m']) + clearance_m),
            joint_pos=dict(zip(joints, map(float, contract['default_joint_pos_rad'])))),
        soft_joint_pos_limit_factor=soft_ratio,
        actuators={'motors': DelayedDCMotorCfg(   # one group: one delay draw per env
            min_delay_ticks=delay[0], max_delay_ticks=delay[1],
            steps_per_tick=int(task['env']['decimation']), joint_names_expr=list(joints),
            stiffness=float(params['kp_nm_per_rad']),
            damping=float(params['kd_nm_s_per_rad']),
            saturation_effort={j: motors[j][0] for j in joints},
            effort_limit={j: float(limits['effort_limit_nm'][joints.index(j)]) for j in joints},
            velocity_limit={j: motors[j][1] for j in joints},
            armature={j: motors[j][2] for j in joints})})
    return scene


def _observations(task: dict):
    """Policy group in our term order with our scales, noise, history, and delay, jitter
    and dropout of the delayed terms together (sim2real.isaaclab.observation_link; joints in
    the articulation's order); the critic's group adds the true base velocity."""
    from isaaclab.envs import mdp
    from isaaclab.managers import ObservationGroupCfg, ObservationTermCfg
    from isaaclab.utils.noise import GaussianNoiseCfg
    from sim2real.isaaclab import sensors
    from sim2real.isaaclab.observation_link import LinkedTerm
    # the IMU's and the encoders' readings (sim2real.isaaclab.sensors: each env's mounting
    # tilt and encoder offsets, drawn by the imu_mount and encoder_bias events)
    funcs = {'ang_vel_b': sensors.imu_ang_vel,
             'projected_gravity': sensors.imu_projected_gravity,
             'velocity_command': mdp.generated_commands,
             'joint_pos_rel': sensors.joint_pos_rel_measured,
             'joint_vel': mdp.joint_vel_rel, 'action_history': mdp.last_action,
             'lin_vel_b': mdp.base_lin_vel}
    group_cfg = task['env']['observations']['policy']
    policy = ObservationGroupCfg(concatenate_terms=True,
                                 enable_corruption=bool(group_cfg['add_noise']))
    link = {'delay_ticks': _int_range(group_cfg.get('delay_ticks') or (0, 0)),
            'jitter_prob': float(group_cfg.get('jitter_prob') or 0.0),
            'dropout_prob': _uniform(group_cfg.get('dropout_prob') or (0.0, 0.0))}
    linked = (link['delay_ticks'][1] > 0 or link['jitter_prob'] > 0.0
              or link['dropout_prob'][1] > 0.0)
    for name, term in group_cfg['terms'].items():
        if name not in funcs:
            raise ValueError(f'observations.policy.{name}: no Isaac Lab term is mapped')
        if term['params']:   # e.g. imu: false, a true reading in the policy group
            raise ValueError(f'observations.policy.{name}.params {term["params"]}: only the '
                             'sensor readings (the defaults) are mapped')
        scale = float(term['scale'])
        # ours is in scaled units; Isaac Lab's noise and a linked term's are in raw units
        noise_std = float(term['noise_std']) / scale if group_cfg['add_noise'] else 0.0
        params = {'command_name': 'base_velocity'} if name == 'velocity_command' else {}
        kwargs = {'func': funcs[name], 'params': params}
        if linked and term.get('delayed', True):   # noised before the delay, as ours
            kwargs = {'func': LinkedTerm, 'params': {
                'func': funcs[name], 'func_params': params, 'noise_std': noise_std, **link}}
        elif noise_std:
            kwargs['noise'] = GaussianNoiseCfg(std=noise_std)
        if term['clip'] is not None:
            kwargs['clip'] = (-float(term['clip']) / scale, float(term['clip']) / scale)
        history = int(term['history_length'])
        setattr(policy, name, ObservationTermCfg(
            scale=scale, history_length=history if history > 1 else 0, **kwargs))
    critic = ObservationGroupCfg(concatenate_terms=True, enable_corruption=False)
    lin_vel = task['env']['observations']['critic']['terms'].get('lin_vel_b')
    if lin_vel is not None:
        critic.lin_vel_b = ObservationTermCfg(func=mdp.base_lin_vel,
                                              scale=float(lin_vel['scale']))
    return policy, critic


def _rewards(task: dict):
    """Each of our reward terms as Isaac Lab's of the same formula, with our weight."""
    from isaaclab.envs import mdp
    from isaaclab.managers import RewardTermCfg, SceneEntityCfg
    from isaaclab_tasks.core.velocity import mdp as velocity_mdp
    from isaaclab_tasks.core.velocity.velocity_env_cfg import RewardsCfg
    contacts = 'contact_forces'
    command = {'command_name': 'base_velocity'}
    table = {
        'track_lin_vel_xy': lambda p: (mdp.track_lin_vel_xy_exp,
                                       {**command, 'std': p['std_m_s']}),
        'track_ang_vel_z': lambda p: (mdp.track_ang_vel_z_exp,
                                      {**command, 'std': p['std_rad_s']}),
        'lin_vel_z': lambda p: (mdp.lin_vel_z_l2, {}),
        'ang_vel_xy': lambda p: (mdp.ang_vel_xy_l2, {}),
        'joint_torques': lambda p: (mdp.joint_torques_l2, {}),
        'joint_acc': lambda p: (mdp.joint_acc_l2, {}),
        'action_rate': lambda p: (mdp.action_rate_l2, {}),
        'feet_air_time': lambda p: (velocity_mdp.feet_air_time, {
            **command, 'threshold': p['threshold_s'],
            'sensor_cfg': SceneEntityCfg(contacts, body_names=FEET)}),
        'undesired_contacts': lambda p: (mdp.undesired_contacts, {
            'threshold': CONTACT_N,
            'sensor_cfg': SceneEntityCfg(contacts, body_names=[BASE, THIGHS_CALVES])}),
        'joint_pos_limits': lambda p: (mdp.joint_pos_limits, {}),
        'flat_orientation': lambda p: (mdp.flat_orientation_l2, {}),
        'termination': lambda p: (mdp.is_terminated, {}),
        'base_height': lambda p: (mdp.base_height_l2, {'target_height': p['target_m']}),
    }
    return _mapped('rewards', RewardsCfg(), task['env']['rewards'], table,
                   lambda term, func, params: RewardTermCfg(
                       func=func, weight=float(term['weight']), params=params))


def _terminations(task: dict):
    """time_out, base contact, tilt and base height, with our limits."""
    from isaaclab.envs import mdp
    from isaaclab.managers import SceneEntityCfg, TerminationTermCfg
    from isaaclab_tasks.core.velocity.velocity_env_cfg import TerminationsCfg
    table = {
        'time_out': lambda p: (mdp.time_out, {}),
        'base_contact': lambda p: (mdp.illegal_contact, {
            'threshold': CONTACT_N,
            'sensor_cfg': SceneEntityCfg('contact_forces', body_names=BASE)}),
        'bad_orientation': lambda p: (mdp.bad_orientation, {'limit_angle': p['limit_rad']}),
        'base_too_low': lambda p: (mdp.root_height_below_minimum,
                                   {'minimum_height': p['min_height_m']}),
    }
    return _mapped('terminations', TerminationsCfg(), task['env']['terminations'], table,
                   lambda term, func, params: TerminationTermCfg(
                       func=func, params=params, time_out=bool(term['time_out'])))


def _events(task: dict):
    """Our randomization as Isaac Lab's event terms, with our ranges."""
    from isaaclab.envs import mdp
    from isaaclab.managers import EventTermCfg, SceneEntityCfg
    from isaaclab_tasks.core.velocity.velocity_env_cfg import EventsCfg
    from sim2real.isaaclab import sensors
    from sim2real.isaaclab.actuators import randomize_motor_strength

    def robot(bodies=None):
        return SceneEntityCfg('robot', body_names=bodies) if bodies else SceneEntityCfg('robot')
    table = {
        'foot_friction': lambda p: ('startup', mdp.randomize_rigid_body_material, {
            'asset_cfg': robot(FEET), 'static_friction_range': _uniform(p['friction_range']),
            'dynamic_friction_range': _uniform(p['friction_range']),
            'restitution_range': (0.0, 0.0), 'num_buckets': 64}),
        'base_mass': lambda p: ('startup', mdp.randomize_rigid_body_mass, {
            'asset_cfg': robot(BASE), 'mass_distribution_params': _uniform(p['mass_range_kg']),
            'operation': 'add'}),
        'base_com': lambda p: ('startup', mdp.randomize_rigid_body_com, {
            'asset_cfg': robot(BASE), 'com_range': {
                axis: (-float(p['offset_m']), float(p['offset_m'])) for axis in 'xyz'}}),
        'link_masses': lambda p: ('startup', mdp.randomize_rigid_body_mass, {
            'asset_cfg': robot('.*_(hip|thigh|calf|foot)'),
            'mass_distribution_params': _uniform(p['scale_range']), 'operation': 'scale'}),
        'pd_gains': lambda p: ('reset', mdp.randomize_actuator_gains, {
            'asset_cfg': robot(), 'stiffness_distribution_params': _uniform(p['kp_scale']),
            'damping_distribution_params': _uniform(p['kd_scale']), 'operation': 'scale'}),
        'reset_base': lambda p: ('reset', mdp.reset_root_state_uniform, {
            'pose_range': {'x': (-p['offset_m'], p['offset_m']),
                           'y': (-p['offset_m'], p['offset_m']), 'yaw': (-math.pi, math.pi)},
            'velocity_range': {
                **{a: (-p['lin_vel_m_s'], p['lin_vel_m_s']) for a in ('x', 'y', 'z')},
                **{a: (-p['ang_vel_rad_s'], p['ang_vel_rad_s'])
                   for a in ('roll', 'pitch', 'yaw')}}}),
        'reset_joints': lambda p: ('reset', mdp.reset_joints_by_scale, {
            'position_range': _uniform(p['scale_range']), 'velocity_range': (0.0, 0.0)}),
        'push_base': lambda p: ('interval', mdp.push_by_setting_velocity, {
            'velocity_range': {a: (-p['lin_vel_m_s'], p['lin_vel_m_s']) for a in 'xy'}}),
        'motor_strength': lambda p: ('reset', randomize_motor_strength, {
            'strength_range': _uniform(p['strength_range'])}),
        'encoder_bias': lambda p: ('reset', sensors.randomize_encoder_bias, {
            'bias_rad': float(p['bias_rad'])}),
        'imu_mount': lambda p: ('reset', sensors.randomize_imu_mount, {
            'max_tilt_rad': float(p['max_tilt_rad'])}),
    }

    def event(term, mode, func, params):
        extra = {'interval_range_s': _uniform(term['interval_s'])} if mode == 'interval' else {}
        return EventTermCfg(func=func, mode=mode, params=params, **extra)
    return _mapped('events', EventsCfg(), task['env']['events'], table, event)


def env_cfg(task: dict, run_dir: Path, num_envs: int):
    """The Isaac Lab env config of our quadruped task described by the task file."""
    from isaaclab.envs import mdp
    from isaaclab_tasks.core.velocity.velocity_env_cfg import LocomotionVelocityRoughEnvCfg
    from sim2real.isaaclab import rewards
    env = task['env']
    if env['scene']['params'].get('terrain') is not None:
        raise ValueError('scene.params.terrain: only flat ground is built for Isaac Lab')
    for item, why in NOT_IN_ISAACLAB.items():
        log.warning('Isaac Lab env of %s: %s not reproduced (%s)', task['task'], item, why)
    cfg = LocomotionVelocityRoughEnvCfg()
    cfg.scene = _scene(task, Path(run_dir), num_envs)
    cfg.sim.physics = cfg.sim.physics.newton_mjwarp   # kit-less: resolve the preset
    cfg.sim.physics.solver_cfg.njmax = 65              # Isaac Lab's Go2 flat sizes
    cfg.sim.physics.solver_cfg.nconmax = 35
    # our delayed DC motor runs in Isaac Lab's actuator loop (Newton's native actuators take
    # only Isaac Lab's own classes, and their delay is fixed per joint, not drawn per env)
    cfg.sim.use_newton_actuators = False
    cfg.curriculum.terrain_levels = None
    cfg.decimation = int(env['decimation'])
    cfg.sim.dt = float(env['physics_dt_s'])
    cfg.sim.render_interval = cfg.decimation
    cfg.episode_length_s = float(env['episode_length_s'])
    cfg.scene.contact_forces.update_period = cfg.sim.dt
    command = env['commands']['base_velocity']['params']
    velocity = cfg.commands.base_velocity
    velocity.resampling_time_range = (float(command['resampling_time_s']),) * 2
    velocity.rel_standing_envs = float(command['standing_fraction'])
    velocity.heading_command = False
    velocity.rel_heading_envs = 0.0
    velocity.debug_vis = False
    velocity.ranges.lin_vel_x = _uniform(command['lin_vel_x_m_s'])
    velocity.ranges.lin_vel_y = _uniform(command['lin_vel_y_m_s'])
    velocity.ranges.ang_vel_z = _uniform(command['ang_vel_z_rad_s'])
    action = task['contract']['action']['params']
    # joints in the articulation's order, as every Isaac Lab term: import-isaaclab maps them
    cfg.actions.joint_pos = mdp.JointPositionActionCfg(
        asset_name='robot', joint_names=['.*'], scale=float(action['scale']),
        use_default_offset=True)
    cfg.observations.policy, cfg.observations.critic = _observations(task)
    cfg.rewards = _rewards(task)
    if env.get('only_positive_rewards'):
        # the total clipped at zero before the after-clip terms (sim2real/isaaclab/rewards.py)
        setattr(cfg, rewards.CFG_ATTR, [name for name, term in env['rewards'].items()
                                        if term.get('after_clip') and term['weight'] != 0.0])
    cfg.terminations = _terminations(task)
    cfg.events = _events(task)
    return cfg


class metrics:   # noqa: N801  (the builder module's hook, named as env_cfg is)
    """Our VelocityMetrics in the Isaac Lab env: per episode the mean planar velocity error
    in the heading frame and the yaw-rate error, counted from settle_s after each command
    change; a fall is a termination before the time-out (metrics.py has the definitions)."""

    def __init__(self, env, task: dict):
        """Accumulators for env's envs; tolerance and settling time from the task file."""
        import torch
        params = task['env']['metrics']['params']
        command = task['env']['commands']['base_velocity']['params']
        self.env = env
        self.tolerance_mps = float(params['tolerance_mps'])
        self.settle_s = float(params['settle_s'])
        self.period_s = float(command['resampling_time_s'])
        n = env.num_envs
        self._lin = torch.zeros(n)
        self._yaw = torch.zeros(n)
        self._count = torch.zeros(n)
        self._steps = torch.zeros(n)
        self.step_dt_s = float(env.step_dt)
        self.episodes: list[dict] = []

    def update(self, active) -> None:
        """Add this step's errors of the active envs past their settling time."""
        import torch
        from sim2real.isaaclab.sensors import as_tensor
        env = self.env
        robot = env.scene['robot']
        command = as_tensor(env.command_manager.get_command('base_velocity')).cpu()
        time_left = as_tensor(env.command_manager.get_term('base_velocity').time_left).cpu()
        counted = active & (self.period_s - time_left >= self.settle_s - 0.5 * self.step_dt_s)
        v_w = as_tensor(robot.data.root_link_lin_vel_w).cpu()   # base origin, as ours
        yaw = as_tensor(robot.data.heading_w).cpu()
        cos, sin = torch.cos(yaw), torch.sin(yaw)
        v_heading = torch.stack((cos * v_w[:, 0] + sin * v_w[:, 1],
                                 -sin * v_w[:, 0] + cos * v_w[:, 1]), dim=1)
        lin = torch.linalg.vector_norm(command[:, :2] - v_heading, dim=1)
        yaw_rate = as_tensor(robot.data.root_link_ang_vel_w).cpu()[:, 2]
        self._lin += counted * lin
        self._yaw += counted * (command[:, 2] - yaw_rate).abs()
        self._count += counted
        self._steps += active

    def finish(self, done, terminated) -> None:
        """Record the episodes of the envs in the mask done (terminated: theirs)."""
        for k, env_id in enumerate(done.nonzero().flatten().tolist()):
            count = float(self._count[env_id])
            lin = float(self._lin[env_id]) / count if count else float('nan')
            yaw = float(self._yaw[env_id]) / count if count else float('nan')
            fell = bool(terminated[k])
            self.episodes.append({'lin_vel_error_mps': lin, 'yaw_rate_error_radps': yaw,
                                  'fall': fell,
                                  'length_s': (float(self._steps[env_id]) + 1) * self.step_dt_s,
                                  'success': (not fell) and count > 0
                                  and lin <= self.tolerance_mps})

    def result(self) -> dict:
        """Means over the recorded episodes, with our metric names, and when each fall came
        [s after the reset]."""
        def mean(key):
            values = [e[key] for e in self.episodes if e[key] == e[key]]
            return sum(values) / len(values) if values else float('nan')
        n = max(1, len(self.episodes))
        return {'lin_vel_error_mps': mean('lin_vel_error_mps'),
                'yaw_rate_error_radps': mean('yaw_rate_error_radps'),
                'fall_rate': sum(e['fall'] for e in self.episodes) / n,
                'success_rate': sum(e['success'] for e in self.episodes) / n,
                'fall_times_s': sorted(round(e['length_s'], 2) for e in self.episodes
                                       if e['fall'])}
