"""Crazyflie 2.1-class quadrotor: hover with recovery, and trajectory tracking."""


def register_tasks() -> None:
    """Register quadrotor-hover and quadrotor-track."""
    from sim2real.rl.networks import PolicyCfg
    from sim2real.tasks.quadrotor.cfg import quadrotor_hover_cfg, quadrotor_track_cfg
    from sim2real.tasks.registry import register, TaskSpec
    train = {'num_envs': 4096, 'max_iterations': 300, 'max_seconds': 480.0,
             'ppo': {'policy': PolicyCfg(init_noise_std=0.5, actor_hidden_dims=(64, 64),
                                         critic_hidden_dims=(128, 128)),
                     'num_steps_per_env': 24, 'entropy_coef': 0.002, 'gamma': 0.99}}
    register(TaskSpec('quadrotor-hover', quadrotor_hover_cfg,
                      'Crazyflie-class quadrotor: reach and hold a target, recover from tilt '
                      'and spin', train))
    register(TaskSpec('quadrotor-track', quadrotor_track_cfg,
                      'Crazyflie-class quadrotor: follow random smooth trajectories', train))
