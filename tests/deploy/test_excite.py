"""Identification runs (issue 51): each robot's excitation stays inside what its policy was
trained for and under a minute; the schedule is kept; `sim2real excite` delivers every
command over real DDS to another process, in order, and says so when nothing listens; the
identification verdict names what spoiled a run."""

from __future__ import annotations

from pathlib import Path
import subprocess
import sys
import time

import numpy as np
import pytest
import yaml

from sim2real.deploy.robots import robot_module
from sim2real.deploy.runtime.excitation import Excitation, SAMPLE_HZ
from sim2real.hil.identify import play, verdict
from tests.system.test_cli import run_cli

pytestmark = pytest.mark.filterwarnings('ignore::DeprecationWarning')
CONFIG = Path(__file__).resolve().parents[2] / 'config' / 'quadrotor.yaml'
QUADROTOR = yaml.safe_load(CONFIG.read_text())['policy_node']['ros__parameters']


def _excitation(robot: str, params: dict | None = None) -> Excitation:
    """The robot's identification schedule."""
    return robot_module(robot, 'excitation').excitation(params or QUADROTOR)


def test_the_quadrotor_flies_moves_and_eights_within_a_metre_of_its_target():
    """Setpoints 50 Hz over 50 s, at most 1 m from hover_target_m (the hover task starts up
    to 1 m away), inside the geofence, reaching +-0.4 m on every axis; no jump: the setpoint
    moves at most 0.9 m/s x 20 ms a sample (a 0.4 m minimum-jerk move in 1 s peaks at
    0.75 m/s, the figure of eight at 0.89 m/s)."""
    e = _excitation('quadrotor')
    target = np.asarray(QUADROTOR['hover_target_m'])
    offsets = e.values - target
    assert e.duration_s == 50.0
    assert np.diff(e.times_s) == pytest.approx(1 / SAMPLE_HZ)
    assert np.linalg.norm(np.diff(e.values, axis=0), axis=1).max() <= 0.9 / SAMPLE_HZ
    assert np.linalg.norm(offsets, axis=1).max() <= 1.0
    assert offsets.max(axis=0) == pytest.approx([0.5, 0.4, 0.4], abs=1e-3)
    assert offsets.min(axis=0) == pytest.approx([-0.5, -0.4, -0.4], abs=1e-3)
    assert (e.values >= QUADROTOR['geofence_min_m']).all()
    assert (e.values <= QUADROTOR['geofence_max_m']).all()
    assert e.at(e.duration_s) == pytest.approx(target) and e.at(-0.1) is None


def test_the_quadruped_walks_every_command_inside_its_training_ranges():
    """Velocity commands within x +-1, y +-0.5 m/s and yaw +-1 rad/s, each of forward,
    backward, sideways and both turns present, standing at start and end, under 45 s."""
    e = _excitation('quadruped', {})
    assert e.duration_s == 42.0
    assert (np.abs(e.values) <= [1.0, 0.5, 1.0]).all()
    for column, sign in ((0, 1), (0, -1), (1, 1), (1, -1), (2, 1), (2, -1)):
        assert (sign * e.values[:, column] > 0).any()
    assert not e.values[0].any() and not e.values[-1].any()


def test_a_parameter_file_may_leave_the_topics_at_their_defaults(tmp_path):
    """A real robot's file naming only its policy: the plan uses the node's default
    setpoint topic and hover target; a file without the node's section is refused."""
    from sim2real.hil.excite import node_params, plan
    path = tmp_path / 'robot.yaml'
    path.write_text('policy_node:\n  ros__parameters:\n    policy_file: p.onnx\n')
    _, summary = plan('quadrotor', node_params('quadrotor', path))
    assert summary['topic'] == '/setpoint' and summary['commands'] == 2500
    path.write_text('other_node: {}\n')
    with pytest.raises(ValueError, match='no policy_node ros__parameters'):
        node_params('quadrotor', path)


def test_the_hand_runs_its_ordinary_rotation():
    """No operator command; 40 s."""
    e = _excitation('hand', {})
    assert (e.message, len(e.times_s), e.duration_s) == ('', 0, 40.0)


def test_the_schedule_is_kept_and_a_late_command_is_not_bunched():
    """10 commands 30 ms apart: each sent within 15 ms of its time; the run lasts its 0.4 s.
    A send that stalls 100 ms at the second command: the 3rd and 4th, due meanwhile, are
    skipped, the newest due (the 5th) goes out, the rest on time."""
    e = Excitation('s', 't', 'Twist', np.arange(10) * 0.03, np.arange(10.0)[:, None], 0.4,
                   'test')
    sent = []
    t0, t1 = play(e, lambda v: sent.append(time.monotonic()))
    late = np.array(sent) - (t0 + e.times_s)
    assert len(sent) == 10 and late.min() >= 0 and late.max() < 0.015
    assert t1 - t0 == pytest.approx(0.4, abs=0.02)
    values = []

    def stalls(v):
        values.append(float(v[0]))
        if len(values) == 2:
            time.sleep(0.1)
    play(e, stalls)
    assert values[:3] == [0.0, 1.0, 4.0] and values[3:] == [5.0, 6.0, 7.0, 8.0, 9.0]


SENDER = """
import numpy as np
from sim2real.deploy.runtime.excitation import Excitation
from sim2real.hil.excite import send
values = np.c_[np.arange(25) * 0.1, np.zeros(25), np.ones(25)]
e = Excitation('setpoint', 'setpoint_topic', 'PointStamped', np.arange(25) * 0.02, values,
               0.5, 'test')
print(send(e, '/excite_test', wait_s=10.0), flush=True)
"""


def test_excite_delivers_every_command_in_order_over_dds(hil_monitor):
    """Another process sends 25 PointStamped setpoints in 0.5 s once this one subscribes:
    all 25 arrive, in order, with their values."""
    from geometry_msgs.msg import PointStamped
    got = []
    hil_monitor.create_subscription(
        PointStamped, '/excite_test', lambda msg: got.append(msg.point.x), 50)
    proc = subprocess.run([sys.executable, '-c', SENDER], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "'sent': 25" in proc.stdout
    deadline = time.monotonic() + 2.0
    while len(got) < 25 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert got == pytest.approx(list(np.arange(25) * 0.1))


def test_excite_says_when_no_node_listens(tmp_path, monkeypatch):
    """`sim2real excite quadrotor` on an empty domain: exit 2 after 5 s, naming the topic."""
    from sim2real.hil.processes import private_domain_id, ros_environment
    for key, value in ros_environment(private_domain_id(), base={}).items():
        monkeypatch.setenv(key, value)
    proc = run_cli('excite', 'quadrotor', cwd=tmp_path, expect=2)
    assert 'nothing subscribes to /setpoint after 5 s' in proc.stderr, proc.stderr


def test_the_verdict_names_what_spoiled_an_identification_run():
    """A fallback, a fall and limit violations each fail the run, named; a clean one passes."""
    clean = {'states_seen': ['active'], 'fell': False, 'limit_violations': 0}
    assert verdict(clean)['passed']
    spoiled = verdict({'states_seen': ['active', 'fallback:stale'], 'fell': True,
                       'limit_violations': 3})
    line = spoiled['scenarios'][0]['line']
    assert not spoiled['passed']
    assert 'fallback:stale' in line and 'fell' in line and '3 limit violations' in line


def test_a_spoiled_run_on_a_disturbed_machine_is_inconclusive_not_failed():
    """A fallback in a run the machine stalled: inconclusive (exit 3), the reason kept."""
    out = verdict({'states_seen': ['fallback:stale'], 'fell': False, 'limit_violations': 0},
                  disturbed=True)
    assert out['inconclusive'] and out['scenarios'][0]['inconclusive']
    assert 'inconclusive: a stalled machine' in out['scenarios'][0]['line']
    assert not verdict({'states_seen': ['active'], 'fell': False, 'limit_violations': 0},
                       disturbed=True)['inconclusive']
