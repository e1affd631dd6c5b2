"""The runtime core builds and steps with torch, mujoco and rclpy impossible to import."""

import subprocess
import sys

BLOCKED_RUN = r"""
import sys
BLOCKED = ('torch', 'mujoco', 'rclpy')

class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in BLOCKED:
            raise ImportError(f'{name} is blocked')
        return None

sys.meta_path.insert(0, Blocker())
import numpy as np
from sim2real.deploy.runtime import Runtime, Sample
runtime = Runtime.from_files(sys.argv[1], sys.argv[2])
odom = {'pos_w': np.array([0.0, 0.0, 1.5]), 'quat_wxyz': np.array([1.0, 0, 0, 0]),
        'lin_vel_b': np.zeros(3), 'ang_vel_b': np.zeros(3)}
runtime.put('odom', Sample(odom, 0.0, 0.0))
runtime.put('imu', Sample({'ang_vel_b': np.zeros(3)}, 0.0, 0.0))
assert runtime.enable(0.0) == (True, '')
result = runtime.step(0.0)
assert result.state == 'soft_start' and result.action.shape == (4,)
loaded = sorted(m for m in sys.modules if m.split('.')[0] in BLOCKED)
allowed = ('sim2real', 'sim2real.contract', 'sim2real.contract_digest', 'sim2real.terms',
           'sim2real.assets', 'sim2real.onnx_io', 'sim2real.urdf', 'sim2real.plugins',
           'sim2real.deploy', 'sim2real.deploy.runtime', 'sim2real.deploy.robots')
robot = ('sim2real.deploy.robots.quadrotor', 'sim2real.deploy.robots.quadrotor.params',
         'sim2real.deploy.robots.quadrotor.profile', 'sim2real.deploy.robots.quadrotor.runtime',
         'sim2real.deploy.robots.quadrotor.landing',
         'sim2real.deploy.robots.quadrotor.cmd_vel_legacy',
         'sim2real.deploy.robots.quadrotor.twist_check')
ours = sorted(m for m in sys.modules if m.startswith('sim2real') and m not in allowed + robot
              and not m.startswith('sim2real.deploy.runtime.'))
print('OK', loaded, ours)
"""


def test_runtime_needs_no_torch_mujoco_or_rclpy(quad_policy, quad_params_file, repo_root):
    """Blocking torch, mujoco, rclpy: a Runtime builds and steps armed; only the contract
    (and its digest), terms, assets, urdf, onnx_io and plug-in loader modules of sim2real
    are loaded besides the runtime itself and the runtime side of the robot's folder (not its
    bridge or ROS)."""
    proc = subprocess.run(
        [sys.executable, '-c', BLOCKED_RUN, str(quad_policy), str(quad_params_file)],
        capture_output=True, text=True, cwd=repo_root, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == 'OK [] []'
