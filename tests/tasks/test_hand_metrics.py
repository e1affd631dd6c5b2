"""hand-rotate's rotation measure and metrics on real physics: a cube twisted about the palm
normal by an applied torque is measured turning by the angle its orientation shows."""

import math

import torch


def _yaw(quat):
    """Heading of an (almost) upright cube about world z [rad], (N,)."""
    w, x, y, z = quat.double().unbind(1)
    return torch.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


def test_rotation_steps_add_up_to_the_cube_heading_change(make_env):
    """+-0.03 N m about the palm normal on the cubes of 4 envs (two each way) for 2 s: the
    summed per-step rotation equals the unwrapped heading change within 1e-4 rad and has the
    torque's sign; at the time-out the metric reports the episode's rotation per 10 s (its
    last step, reset before it can be read here, within 1.5 of the largest step seen)."""
    env = make_env('hand-rotate', num_envs=4, play=True,
                   edit=lambda cfg: setattr(cfg, 'episode_length_s', 2.0))
    env.reset(seed=0)
    scene = env.scene
    cube = scene.info.object_body_id
    sign = torch.tensor([1.0, 1.0, -1.0, -1.0], dtype=torch.float64)
    heading = [_yaw(scene.cube_quat_w)]
    total = torch.zeros(4, dtype=torch.float64)
    for _ in range(39):
        scene.backend.xfrc_applied[:, cube, 5] = 0.03 * sign
        env.step(torch.zeros(4, 16))
        total += scene.cube_rotation_step_rad.double()
        heading.append(_yaw(scene.cube_quat_w))
    steps = torch.stack(heading).diff(dim=0)
    unwrapped = (steps + math.pi) % (2 * math.pi) - math.pi
    torch.testing.assert_close(total, unwrapped.sum(dim=0), rtol=0, atol=1e-4)
    assert torch.all(total * sign > 0.05)   # the fingers resist: 0.07-0.65 rad at 0.03 N m
    largest_step = unwrapped.abs().max()
    scene.backend.xfrc_applied[:, cube, 5] = 0.03 * sign
    env.step(torch.zeros(4, 16))   # the 40th step: time-out, the metrics judge the episode
    values = env.metrics.last_values
    assert env.metrics.finished.tolist() == [1, 1, 1, 1]
    per_episode = values['rotation_rad_per_10s'].double() * 2.0 / 10.0
    assert torch.all((per_episode - total).abs() <= 1.5 * largest_step)
    assert values['drop_rate'].tolist() == [0.0] * 4
    assert values['time_to_fall'].tolist() == [1.0] * 4
