"""Crazyflie 2.1-class quadrotor: hover with recovery, and trajectory tracking."""


def register_tasks() -> None:
    """Register quadrotor-hover and quadrotor-track."""
    from sim2real.algo_cfg import PolicyCfg, PPOCfg, SACCfg, TrainCfg
    from sim2real.tasks.quadrotor.cfg import ACTIONS, quadrotor_hover_cfg, quadrotor_track_cfg
    from sim2real.tasks.registry import register, TaskSpec
    # 2048 envs x 24 steps = 49k samples per iteration, 5 epochs of 6 minibatches (8k). On
    # a 2-core CPU the update, not the simulation, is the larger cost (4096 envs with 5 x 12
    # took 2.1 s against 0.84 s of collection): half the batch gives twice the policy
    # updates per env step for the same wall clock (3 epochs of 8 at 4096 envs, half the
    # updates, fell from 0.91 to 0.79 evaluated success). A fixed iteration count (no
    # wall-clock limit) keeps a seed's result reproducible. 300 iterations (about 5 min on
    # 2 cores) pass evaluation and every HIL fault; the shipped policies train 600 (cards),
    # which the box's corners need (hover seed 0, 32 episodes per point: 58 of 64 corners
    # at success >= 0.85 after 400 iterations, 61 after 600).
    # edge_prob: in training each box parameter is drawn at a bound of its range half the
    # time, so the corners are trained for, not only the average (evaluation draws the box
    # uniformly). 0.5 against 0.3 and 0: corners 58, 48 (then without the rate loop's
    # damping) and 41 of 64 after 600 iterations
    train = TrainCfg(
        algo='ppo', num_envs=2048, max_iterations=300, max_seconds=None, edge_prob=0.5,
        ppo=PPOCfg(policy=PolicyCfg(init_noise_std=0.5, actor_hidden_dims=(64, 64),
                                    critic_hidden_dims=(128, 128)),
                   num_steps_per_env=24, num_learning_epochs=5, num_mini_batches=6,
                   entropy_coef=0.002, gamma=0.995),
        sac=_sac(SACCfg, PolicyCfg), learn_threads=2, act_threads=2)
    register(TaskSpec('quadrotor-hover', quadrotor_hover_cfg,
                      'Crazyflie-class quadrotor: reach and hold a target, recover from tilt '
                      'and spin', train, acceptance(), actions=tuple(ACTIONS),
                      sysid='sim2real.tasks.quadrotor.sysid'))
    # track trains with the same edge_prob 0.5 (it once collapsed at seed 0 after 200
    # iterations, before the firmware's thrust capping and the action-rate penalty; seed 0
    # now trains to eval success 1.0). Seed 0, 64 episodes per point: 600 iterations at 0.3
    # passed 62 of 64 corners (the heavy, weak, slow corners with 2 ticks of delay 0.66 /
    # 0.59), 600 at 0.5 (Intel Xeon) 62 (0.84 / 0.80), 900 at 0.5 63 (0.88 / 0.72). The
    # shipped track policy starts from the hover policy instead (policies/quadrotor_track.md)
    register(TaskSpec('quadrotor-track', quadrotor_track_cfg,
                      'Crazyflie-class quadrotor: follow random smooth trajectories',
                      train, acceptance(), actions=tuple(ACTIONS),
                      sysid='sim2real.tasks.quadrotor.sysid'))


def _sac(sac_cfg, policy_cfg):
    """SAC's defaults for the quadrotor tasks (`train --algo sac`), measured on hover.

    Hover seed 0 on 2 cores, evaluated every 2000 iterations (256 episodes), 90 % success:
    - 1-step targets, tau 0.005 (the SAC paper's): no success in 3.9 M steps; the crash
      penalty does not reach back the ~60 steps before it in a few thousand gradient steps.
    - 5-step targets, tau 0.05, lr 3e-4, alpha 0.01: 0.90 at 5.6 M steps, 449 s.
    - the same with lr 1e-3 and alpha from 0.002 (lr 1e-3): 0.98 at 5.1 M steps, 405 s.
    The rewards are per-second rates times dt (0.01 s), so the temperature starts small.
    256 envs and one gradient step of 1024 per env step of them (replay ratio 4): the
    gradient step, not the simulation, is the cost on a CPU (9-12 ms against ~7 ms).
    """
    return sac_cfg(
        num_envs=256, max_iterations=25_000, save_interval=1000, log_interval=100,
        steps_per_env=1, updates_per_iteration=1, batch_size=1024, learning_starts=10_000,
        n_step=5, tau=0.05, gamma=0.99, init_alpha=0.002, alpha_learning_rate=1e-3,
        actor_learning_rate=1e-3, critic_learning_rate=1e-3,
        policy=policy_cfg(actor_hidden_dims=(128, 128), critic_hidden_dims=(128, 128),
                          activation='relu', init_noise_std=0.5))


def acceptance() -> dict:
    """Success floors: 0.9 evaluated and nominal, 0.85 at every edge and corner of the
    randomization box, 0.5 at 1.25x past an edge, except 0.8 at 3 ticks of action delay
    (30 ms: a radio link's latency, 1.25x past the trained 2 ticks)."""
    from sim2real.verdict import Floor

    def success(value):
        return (Floor('success_rate', '>=', value),)
    return {'eval': success(0.9), 'nominal': success(0.9), 'edge': success(0.85),
            'corner': success(0.85), 'past_edge': success(0.5),
            'past_edge:action_delay_ticks': success(0.8)}
