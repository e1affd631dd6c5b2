"""hand-rotate's rotation measure and metrics on real physics: a cube twisted about the palm
normal by an applied torque is measured turning by the angle its orientation shows."""

import math

import torch


def _yaw(quat):
    """Heading of an (almost) upright cube about world z [rad], (N,)."""
    w, x, y, z = quat.double().unbind(1)
    return torch.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


def test_rotation_steps_add_up_to_the_cube_heading_change(make_env):
    """+-0.02 N m about the palm normal on the cubes of 4 envs (two each way) for 2 s: in the
    episodes that run to the time-out, the summed per-step rotation equals the unwrapped
    heading change within 1e-4 rad and has the torque's sign; at the time-out the metric
    reports the episode's rotation per 10 s (its last step, reset before it can be read
    here, within 1.5 of the largest step seen), no drop and a time to fall of 1."""
    def edit(cfg):
        cfg.episode_length_s = 2.0
        # the nominal cube: a small one spins fast enough to tip over, and a tipped cube's
        # heading is no longer its twist about the palm normal
        cfg.events['cube'].params['size_scale_range'] = (1.0, 1.0)
        # friction 0.5: the torque turns every cube against the fingers (at the range's 1.5
        # a held cube can stick, at 0.3 it spins off the palm within the 2 s)
        cfg.events['cube_friction'].params['friction_range'] = (0.5, 0.5)

    env = make_env('hand-rotate', num_envs=4, play=True, edit=edit)
    env.reset(seed=0)
    scene = env.scene
    cube = scene.info.object_body_id
    sign = torch.tensor([1.0, 1.0, -1.0, -1.0], dtype=torch.float64)
    heading = [_yaw(scene.cube_quat_w)]
    total = torch.zeros(4, dtype=torch.float64)
    ended = torch.zeros(4, dtype=torch.bool)
    for _ in range(39):
        scene.backend.xfrc_applied[:, cube, 5] = 0.02 * sign
        _, _, terminated, truncated, _ = env.step(torch.zeros(4, 16))
        ended |= terminated | truncated   # a cube spun off the palm: a new episode
        total += scene.cube_rotation_step_rad.double()
        heading.append(_yaw(scene.cube_quat_w))
    kept = ~ended
    assert kept.sum() >= 2
    steps = torch.stack(heading).diff(dim=0)[:, kept]
    unwrapped = (steps + math.pi) % (2 * math.pi) - math.pi
    torch.testing.assert_close(total[kept], unwrapped.sum(dim=0), rtol=0, atol=1e-4)
    assert torch.all(total[kept] * sign[kept] > 0.05)
    largest_step = unwrapped.abs().max()
    scene.backend.xfrc_applied[:, cube, 5] = 0.02 * sign
    env.step(torch.zeros(4, 16))   # the 40th step: time-out, the metrics judge the episode
    values = env.metrics.last_values
    count = int(kept.sum())
    per_episode = values['rotation_rad_per_10s'].double()[kept] * 2.0 / 10.0
    assert torch.all((per_episode - total[kept]).abs() <= 1.5 * largest_step)
    assert values['drop_rate'][kept].tolist() == [0.0] * count
    assert values['time_to_fall'][kept].tolist() == [1.0] * count
    dropped = env.metrics.last_values['drop_rate'][ended]
    assert torch.all(dropped == 1.0)   # the spun-off cubes counted as drops


def test_a_guard_trip_ends_the_episode_as_guard_rate_not_as_a_drop(make_env):
    """Env 0's integrator targets set to index and middle abducted towards each other (pad
    centres 2 cm apart, beyond touching); with zero deltas its PD brings the pads inside the
    guard's 2.5 cm within 1 s: the episode ends by fingertip_guard, counted in guard_rate
    with drop_rate 0 and the termination penalty; env 1 at the grasp runs on; the reset row's
    fingertips are those of its new pose."""
    env = make_env('hand-rotate', num_envs=2, play=True)
    env.reset(seed=0)
    names = env.scene.info.joint_names
    closed = env.action_term.target_rad[0].clone()
    for name, value in {'if_mcp': 0.3, 'if_pip': 0.0, 'if_dip': 0.0, 'mf_mcp': 0.3,
                        'mf_pip': 0.0, 'mf_dip': 0.0, 'if_abd': 0.25, 'mf_abd': -0.25}.items():
        closed[names.index(name)] = value
    env.action_term.target_rad[0] = closed
    ended = None
    for _ in range(20):
        _, _, terminated, _, extras = env.step(torch.zeros(2, 16))
        if bool(terminated[0]):
            ended = extras['log']
            break
    assert ended is not None and not bool(terminated[1])
    scene = env.scene   # the reset row's fingertips are those of its new measured joints
    torch.testing.assert_close(scene.fingertip_pos_m[0], scene.fingertip_kinematics.positions(
        scene.measured_joint_pos_rad(torch.tensor([0])).float())[0])
    values = env.metrics.last_values
    assert (values['guard_rate'][0].item(), values['drop_rate'][0].item()) == (1.0, 0.0)
    assert ended['termination/fingertip_guard'] == 1.0
    assert ended['termination/cube_dropped'] == 0.0
    assert ended['reward/drop'] < 0.0
    assert torch.isnan(values['guard_rate'][1])
