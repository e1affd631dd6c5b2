"""Crazyflie 2.1-class quadrotor: hover with recovery, and trajectory tracking."""


def register_tasks() -> None:
    """Register quadrotor-hover and quadrotor-track."""
    from sim2real.rl.networks import PolicyCfg
    from sim2real.tasks.quadrotor.cfg import quadrotor_hover_cfg, quadrotor_track_cfg
    from sim2real.tasks.registry import register, TaskSpec
    # 4096 envs x 24 steps = 98k samples per iteration; on a 2-core CPU, 12 minibatches of
    # 8k samples give more progress per second than rsl_rl's 4 GPU-sized ones
    # 185 iterations (18 M steps) take about 9 minutes on the 2-core reference machine; a
    # fixed iteration count (no wall-clock limit) keeps a seed's result reproducible
    train = {'num_envs': 4096, 'max_iterations': 185, 'max_seconds': None,
             'ppo': {'policy': PolicyCfg(init_noise_std=0.5, actor_hidden_dims=(64, 64),
                                         critic_hidden_dims=(128, 128)),
                     'num_steps_per_env': 24, 'num_mini_batches': 12, 'entropy_coef': 0.002,
                     'gamma': 0.995},
             'learn_threads': 2, 'act_threads': 2}
    register(TaskSpec('quadrotor-hover', quadrotor_hover_cfg,
                      'Crazyflie-class quadrotor: reach and hold a target, recover from tilt '
                      'and spin', train))
    register(TaskSpec('quadrotor-track', quadrotor_track_cfg,
                      'Crazyflie-class quadrotor: follow random smooth trajectories', train))
