"""Adversarial sensor data against the shipped policies and their parameter files.

One test per defect the hardening issue reproduced through Runtime.put / Runtime.step with
time injected; each failed on the code before the fix. Quadrotor: policies/
quadrotor_hover.onnx with config/quadrotor.yaml (odom 50 ms timeout, 100 Hz). Quadruped:
policies/quadruped_flat.onnx with config/quadruped.yaml (50 Hz, stand-up soft start, leg
odometry latch at 2.5 m/s, cmd_vel timeout 0.5 s).
"""

from pathlib import Path

import numpy as np
import pytest

from sim2real.deploy.runtime.parts import LegOdometryPart
from sim2real.deploy.runtime import Runtime, Sample

ROOT = Path(__file__).resolve().parents[3]
LEVEL = np.array([1.0, 0.0, 0.0, 0.0])
HOVER_N = 0.027 * 9.81
Q0 = np.array([0.1, 0.8, -1.5, -0.1, 0.8, -1.5, 0.1, 1.0, -1.5, -0.1, 1.0, -1.5])


@pytest.fixture
def quad():
    """The shipped hover policy behind config/quadrotor.yaml."""
    return Runtime.from_files(ROOT / 'policies/quadrotor_hover.onnx',
                              ROOT / 'config/quadrotor.yaml')


@pytest.fixture
def legged():
    """The shipped flat-ground quadruped policy behind config/quadruped.yaml."""
    return Runtime.from_files(ROOT / 'policies/quadruped_flat.onnx',
                              ROOT / 'config/quadruped.yaml')


def odom(t, quat=LEVEL, z=1.5, vz=0.0, stamp=None):
    """Odometry received at t (stamp t unless given), at height z, vertical speed vz."""
    return Sample({'pos_w': np.array([0.0, 0.0, z]), 'quat_wxyz': np.asarray(quat, float),
                   'lin_vel_b': np.array([0.0, 0.0, vz]), 'ang_vel_b': np.zeros(3)},
                  t if stamp is None else stamp, t)


def fly(runtime, t, **kw):
    """Fresh odom and imu at t, then one tick."""
    runtime.put('odom', odom(t, **kw))
    runtime.put('imu', Sample({'ang_vel_b': np.zeros(3)}, t, t))
    return runtime.step(t)


def airborne(runtime, until_s=0.3):
    """Enabled at 0 and flown level at 100 Hz until until_s (past the soft start)."""
    fly(runtime, 0.0)
    assert runtime.enable(0.0) == (True, '')
    for t in np.arange(0.01, until_s, 0.01):
        assert fly(runtime, float(t)).state in ('soft_start', 'active')


def walk_feed(runtime, t, q=Q0, qd=None, gyro=None, quat=LEVEL, names=None):
    """Joint states (contract order, or by names), imu and cmd_vel received at t."""
    values = {'pos_rad': np.asarray(q, float), 'vel_rad_s': np.zeros(12) if qd is None else qd}
    if names is not None:
        values['names'] = list(names)
    runtime.put('joint_state', Sample(values, t, t))
    runtime.put('imu', Sample({'quat_wxyz': np.asarray(quat, float),
                               'ang_vel_b': np.zeros(3) if gyro is None else gyro}, t, t))
    runtime.put('command', Sample({'velocity_command': np.array([0.3, 0.0, 0.0])}, t, t))


@pytest.mark.parametrize('quat, words', [
    ([0.0, 1e300, 0.0, 0.0], 'norm 1e+300'), ([1e-320, 0.0, 0.0, 0.0], 'norm 1e-320'),
    ([0.0, 0.0, 0.0, 0.0], 'norm 0'), ([2.0, 0.0, 0.0, 0.0], 'norm 2')])
def test_an_implausible_quaternion_is_not_read_as_level(quad, quat, words):
    """Odometry quaternions of norm 1e300 (upside down), 1e-320, 0 and 2: refused, never
    normalized into 'level'; enable is refused naming the stream and the norm."""
    quad.put('imu', Sample({'ang_vel_b': np.zeros(3)}, 0.0, 0.0))
    quad.put('odom', odom(0.0, quat=quat))
    ok, reason = quad.enable(0.0)
    assert not ok and reason.startswith('bad:odom (quat_wxyz has ') and words in reason


def test_an_implausible_imu_quaternion_latches_the_quadruped(legged):
    """The quadruped's IMU orientation [0, 1e300, 0, 0]: enable refused naming it."""
    walk_feed(legged, 0.0, quat=[0.0, 1e300, 0.0, 0.0])
    ok, reason = legged.enable(0.0)
    assert not ok and reason.startswith('bad:imu (quat_wxyz has norm 1e+300')


def test_a_zero_quaternion_in_flight_descends_instead_of_free_fall(quad):
    """Fresh odometry with a zero quaternion in flight: fallback 'bad:odom'; the thrust is
    the level-and-descend law from the last good odometry (m (g - 2 x 0.4)), then, once stale,
    the blind descent at 0.9 m g for 8 s: never zero thrust in the air."""
    airborne(quad)
    quad.put('odom', odom(0.3, quat=[0.0, 0.0, 0.0, 0.0]))
    result = quad.step(0.3)
    assert (result.state, result.reason.split(' ')[0]) == ('fallback', 'bad:odom')
    assert result.command[0] == pytest.approx(0.027 * (9.81 - 2.0 * 0.4), rel=1e-6)
    for t in np.arange(0.31, 1.0, 0.01):   # odom stays bad: blind descent
        quad.put('odom', odom(float(t), quat=[0.0, 0.0, 0.0, 0.0]))
        thrust = quad.step(float(t)).command[0]
    assert thrust == pytest.approx(0.9 * HOVER_N)


@pytest.mark.parametrize('vz', [30.0, 1e300, -1e300])
def test_an_absurd_speed_latches_and_the_descent_ignores_it(quad, vz):
    """Odometry vertical speed 30 m/s or +-1e300 m/s while active (finite, beyond
    max_speed_m_s 5): 'speed' latches in that tick (the policy, whose observation clips at
    10 m/s, would brake with zero thrust), and the descent levels by attitude with the blind
    thrust 0.9 m g instead of trusting the reading: never 0, never a full-thrust climb."""
    airborne(quad)
    for t in np.arange(0.3, 0.5, 0.01):
        result = fly(quad, float(t), vz=vz)
        assert (result.state, result.reason) == ('fallback', 'speed')
        assert result.command[0] == pytest.approx(0.9 * HOVER_N)


def test_an_absurd_body_rate_latches(quad):
    """A gyro reading of 25 rad/s (beyond max_ang_vel_rad_s 20) latches 'ang_vel'."""
    airborne(quad)
    quad.put('odom', odom(0.3))
    quad.put('imu', Sample({'ang_vel_b': np.array([25.0, 0.0, 0.0])}, 0.3, 0.3))
    assert quad.step(0.3).reason == 'ang_vel'


def test_one_low_sample_in_the_air_does_not_cut_the_motors(quad):
    """In the fallback at 1.5 m, one odometry sample reading z = 0 (a glitch): the motors stay
    on; only 3 consecutive fresh samples below ground_height_m mean landed."""
    airborne(quad)
    quad.estop(0.3)
    fly(quad, 0.3)
    fly(quad, 0.31, z=0.0)
    for t in np.arange(0.32, 0.6, 0.01):
        thrust = fly(quad, float(t)).command[0]
    assert thrust > 0.5 * HOVER_N


def imu_only(runtime, t):
    """An IMU sample at t and one tick, no odometry (a gap shorter than its timeout)."""
    runtime.put('imu', Sample({'ang_vel_b': np.zeros(3)}, t, t))
    return runtime.step(t)


@pytest.mark.parametrize('latch', ['estop', 'none'])
@pytest.mark.parametrize('glitch_z', [0.0, -3.0])
def test_one_glitched_sample_then_an_odometry_gap_keeps_the_motors_on(quad, latch, glitch_z):
    """At 1.5 m, after a latch (e-stop) or none: ONE odometry sample at z = 0 (inside the
    geofence) or z = -3 m (an estimator glitch far below the ground; it latches 'geofence'),
    then 30 ms of IMU only (shorter than the 50 ms odometry timeout), then good odometry at
    1.5 m: the thrust never drops to 0 (it counted the one sample once per tick: cut on the
    third tick, for good)."""
    airborne(quad)
    if latch == 'estop':
        quad.estop(0.3)
    fly(quad, 0.3)
    thrusts = [fly(quad, 0.31, z=glitch_z).command[0]]
    thrusts += [imu_only(quad, t).command[0] for t in (0.32, 0.33, 0.34)]
    thrusts += [fly(quad, float(t)).command[0] for t in np.arange(0.35, 0.5, 0.01)]
    assert min(thrusts) > 0.5 * HOVER_N, thrusts
    if latch == 'estop' or glitch_z < -0.1:
        assert quad.state == 'fallback'


def test_three_low_samples_cut_and_samples_in_the_air_revoke_the_cut(quad):
    """Three distinct glitched samples at z = 0 cut the motors in the fallback; the vehicle
    is then seen falling at 1.45-1.35 m in three samples within the fall window: the
    level-and-descend thrust comes back (it catches a descent of 1 m/s at 2 g)."""
    airborne(quad)
    quad.estop(0.3)
    fly(quad, 0.3)
    cut = [fly(quad, t, z=0.0).command[0] for t in (0.31, 0.32, 0.33)]
    assert cut[0] > 0.0 and cut[1] > 0.0 and cut[2] == 0.0
    falling = [fly(quad, t, z=z, vz=-1.0).command[0]
               for t, z in ((0.34, 1.45), (0.35, 1.4), (0.36, 1.35))]
    assert falling[:2] == [0.0, 0.0]
    assert falling[2] > HOVER_N


def test_a_landed_vehicle_lifted_after_the_fall_window_stays_off(quad):
    """Landed (three samples at 2 cm) and cut; lifted to 1 m by hand 1.5 s later (after the
    0.83 s it takes to fall from the 3 m ceiling): the motors stay off until enable."""
    airborne(quad)
    quad.estop(0.3)
    assert [fly(quad, t, z=0.02).command[0] for t in (0.31, 0.32, 0.33)][2] == 0.0
    for t in np.arange(0.34, 1.8, 0.01):
        result = fly(quad, float(t), z=0.02 if t < 1.5 else 1.0)
    assert result.command[0] == 0.0 and quad.state == 'fallback'


def test_re_enabling_in_the_air_soft_starts_from_the_fallback_thrust(quad):
    """Re-enabled while the fallback holds ~0.24 N in the air: the soft start blends from that
    thrust, not from 0 (no 0.2 s thrust drop)."""
    airborne(quad)
    quad.estop(0.3)
    fallback_thrust = fly(quad, 0.3).command[0]
    assert quad.enable(0.31) == (True, '')
    assert fly(quad, 0.31).command[0] == pytest.approx(fallback_thrust, rel=1e-9)


@pytest.mark.parametrize('stream', ['gyro', 'joint_velocity'])
def test_one_absurd_sample_does_not_poison_leg_odometry(legged, stream):
    """A single finite 1e300 gyro or joint-velocity sample while inactive: the leg-odometry
    estimate stays finite, and with good data again the robot enables (it never could)."""
    spike = np.full(3, 1e300) if stream == 'gyro' else np.full(12, 1e300)
    walk_feed(legged, 0.0, **({'gyro': spike} if stream == 'gyro' else {'qd': spike}))
    legged.step(0.0)
    for t in np.arange(0.02, 0.2, 0.02):
        walk_feed(legged, float(t))
        legged.step(float(t))
        assert np.isfinite(legged.profile.part(LegOdometryPart).odometry.speed_xy_m_s)
    assert legged.profile.part(LegOdometryPart).odometry.speed_xy_m_s < 2.5
    assert legged.enable(0.2) == (True, '')


@pytest.mark.parametrize('jump_s', [3600.0, -1e6])
def test_a_stamp_jump_does_not_stall_the_stream(quad, jump_s):
    """One odometry stamp an hour ahead, or a driver restarting its stamps far back: three
    samples later the stream is fresh again; armed, no stale latch ever trips."""
    airborne(quad)
    base = 1000.0 if jump_s > 0 else jump_s
    for k, t in enumerate(np.arange(0.3, 1.0, 0.01)):
        stamp = 0.3 + jump_s if k == 0 and jump_s > 0 else base + t
        assert fly(quad, float(t), stamp=float(stamp)).state == 'active'
    assert quad.store.latest('odom').received_s == pytest.approx(0.99)


def test_a_restarted_driver_can_enable_again(quad):
    """Stamps an hour ahead, then a normal stream: enable succeeds a second later."""
    fly(quad, 0.0, stamp=3600.0)
    for t in np.arange(0.01, 1.0, 0.01):
        fly(quad, float(t))
    assert quad.enable(1.0) == (True, '')


def test_a_frozen_stamp_still_goes_stale(quad):
    """Control: the same stamp repeated is not new data; 50 ms later the stream is stale."""
    airborne(quad)
    for t in np.arange(0.3, 0.4, 0.01):
        result = fly(quad, float(t), stamp=0.29)
    assert (result.state, result.reason) == ('fallback', 'stale:odom')


@pytest.mark.parametrize('edit, words', [
    (lambda n, q: (n[1:], q[1:]), 'joint "FL_hip_joint" missing from the message'),
    (lambda n, q: (n, q[:11]), '12 joint names but 11 positions'),
    (lambda n, q: (n + [n[3]], np.append(q, 0.0)), 'joint "FR_hip_joint" listed twice in '
                                                   'the message'),
])
def test_bad_joint_names_latch_naming_the_joint(legged, edit, words):
    """JointState with a joint missing, 11 positions for 12 names, a name twice: no exception
    from step() or enable(); refused as 'bad:joint_state (...)' naming what is wrong."""
    names, q = edit(list(legged.contract.joint_names), Q0.copy())
    walk_feed(legged, 0.0, q=q, names=names, qd=np.zeros(len(q)))
    assert legged.enable(0.0) == (False, f'bad:joint_state ({words})')
    assert legged.step(0.0).state == 'inactive'


def test_reordered_and_extra_joint_names_are_accepted(legged):
    """Reversed names plus a gripper joint: mapped by name into contract order."""
    names = list(legged.contract.joint_names)
    q = Q0 + 0.01 * np.arange(12)
    walk_feed(legged, 0.0, q=np.append(q[::-1], 7.0), names=names[::-1] + ['gripper'],
              qd=np.zeros(13))
    np.testing.assert_array_equal(legged.store.value('joint_state', 'pos_rad'), q)


def test_a_receive_time_in_the_future_goes_stale(quad):
    """A sample 'received' 10 s from now does not stay fresh for 10 s: stale at once."""
    quad.put('imu', Sample({'ang_vel_b': np.zeros(3)}, 0.0, 0.0))
    quad.put('odom', odom(10.0, stamp=0.0))
    ok, reason = quad.enable(0.0)
    assert not ok and reason.startswith('stale:odom (the last odom message has a receive time')


def test_time_going_backwards_latches_and_never_replays_the_stand_up(legged):
    """Active, then now_s 1 s earlier: fallback 'clock' at once (the stand-up blend is not
    re-entered) and no joint target moves more than the rate limit in that tick."""
    walk_feed(legged, 0.0)
    assert legged.enable(0.0) == (True, '')
    for t in np.arange(0.02, 2.2, 0.02):
        walk_feed(legged, float(t))
        last = legged.step(float(t))
    assert last.state == 'active'
    walk_feed(legged, 1.2)
    result = legged.step(1.2)
    assert (result.state, result.reason) == ('fallback', 'clock')
    step = np.array(legged.params.max_rate_rad_s) / 50.0
    assert np.all(np.abs(result.command[:12] - last.command[:12]) <= step + 1e-12)
    ok, reason = legged.enable(1.5)
    assert not ok and reason.startswith('clock (the steady clock went back')


def test_the_first_fallback_target_obeys_the_rate_limit(legged):
    """Hold fallback latched while the last target is far from the measured pose: the first
    fallback target moves at most max_rate_rad_s / 50 Hz (0.314 rad on a calf)."""
    legged.params.fallback = 'hold'
    walk_feed(legged, 0.0)
    assert legged.enable(0.0) == (True, '')
    for t in np.arange(0.02, 2.2, 0.02):
        walk_feed(legged, float(t))
        last = legged.step(float(t))
    far = Q0.copy()
    far[2::3] = -2.6   # calves measured 1.1 rad from the default pose
    walk_feed(legged, 2.2, q=far)
    legged.estop(2.2)
    result = legged.step(2.2)
    step = np.array(legged.params.max_rate_rad_s) / 50.0
    assert np.all(np.abs(result.command[:12] - last.command[:12]) <= step + 1e-12)


def test_enable_refusal_says_what_is_missing_and_since_when(legged):
    """cmd_vel never arrived (DDS discovery still running) 3 s after start: the refusal says
    so, instead of a bare 'stale:command'."""
    legged.step(0.0)
    legged.put('joint_state', Sample({'pos_rad': Q0, 'vel_rad_s': np.zeros(12)}, 3.0, 3.0))
    legged.put('imu', Sample({'quat_wxyz': LEVEL, 'ang_vel_b': np.zeros(3)}, 3.0, 3.0))
    assert legged.enable(3.0) == (False, 'stale:command (no command message yet, 3.0 s after '
                                         'start; DDS discovery can take seconds: wait and '
                                         'retry)')


def test_no_exception_escapes_step(quad):
    """A failure inside the chain (here: the integrator raising) latches 'error:...' and
    the tick still returns a finite command within limits; a broken sample does not raise."""
    airborne(quad)

    def broken(*args):
        raise RuntimeError('integrator bug')
    quad.profile.armed_command = broken
    result = fly(quad, 0.3)
    assert (result.state, result.reason) == ('fallback', 'error:RuntimeError')
    assert np.isfinite(result.command).all() and 0.0 < result.command[0] <= 0.55
    quad.put('odom', Sample(None, 0.3, 0.3))
    assert quad.step(0.31).state == 'fallback'


@pytest.mark.parametrize('robot', ['quad', 'legged'])
def test_the_last_resort_reads_no_sensor(robot, request):
    """Even the fallback and the final clamp raising: the tick returns the profile's last
    resort (airborne quadrotor: the blind descent thrust; joints: damping, kp 0)."""
    runtime = request.getfixturevalue(robot)
    if robot == 'quad':
        airborne(runtime)
    else:
        walk_feed(runtime, 0.0)
        assert runtime.enable(0.0) == (True, '')
        runtime.step(0.0)

    def broken(*args):
        raise RuntimeError('bug')
    runtime.estop(0.3)
    runtime.profile.fallback_command = broken
    runtime.profile.final_clamp = broken
    result = runtime.step(0.3)
    assert result.state == 'fallback' and np.isfinite(result.command).all()
    if robot == 'quad':
        assert result.command[0] == pytest.approx(0.9 * HOVER_N)
    else:
        assert not result.command[12:24].any() and np.all(result.command[24:] == 1.0)


def test_a_clock_that_jumped_is_followed_again(quad):
    """now_s jumps an hour ahead for one tick, then runs on from where it was: 'clock'
    latches at the step back, and after 3 steady readings the runtime follows the clock
    again, so good data enables (it was refused for the hour before)."""
    airborne(quad)
    fly(quad, 3600.0)
    assert fly(quad, 0.31).reason == 'clock'
    for t in np.arange(0.32, 0.5, 0.01):
        fly(quad, float(t))
    assert quad.enable(0.5) == (True, '')


def test_an_impossible_joint_position_latches(legged):
    """A calf reading 10 rad (URDF range [-2.72, -0.84]): 'joint_position' latches at once."""
    walk_feed(legged, 0.0)
    assert legged.enable(0.0) == (True, '')
    q = Q0.copy()
    q[2] = 10.0
    walk_feed(legged, 0.02, q=q)
    assert legged.step(0.02).reason == 'joint_position'


def test_a_gyro_received_in_the_future_is_not_the_fresher(quad):
    """With imu_timeout_s 0, an imu sample 'received' 1e6 s ahead does not feed the policy's
    body rates: the odometry's (fresh) rates do."""
    quad.params.imu_timeout_s = 0.0
    quad.put('imu', Sample({'ang_vel_b': np.array([20.0, 20.0, 20.0])}, 0.0, 1e6))
    quad.put('odom', odom(0.0))
    np.testing.assert_array_equal(quad.observation(0.0)[0, 15:18], [0.0, 0.0, 0.0])


def test_a_vehicle_that_left_the_fence_sideways_lands_and_stops(quad):
    """Latched 'geofence' at x = 2.1 m (outside the 2 m fence), then on the ground there
    (z = 0): three samples cut the motors; the position outside the fence horizontally does
    not keep them running."""
    airborne(quad)
    quad.put('odom', Sample({'pos_w': np.array([2.1, 0.0, 1.5]), 'quat_wxyz': LEVEL,
                             'lin_vel_b': np.zeros(3), 'ang_vel_b': np.zeros(3)}, 0.3, 0.3))
    quad.put('imu', Sample({'ang_vel_b': np.zeros(3)}, 0.3, 0.3))
    assert quad.step(0.3).reason == 'geofence'
    for t in (0.31, 0.32, 0.33):
        quad.put('odom', Sample({'pos_w': np.array([2.1, 0.0, 0.0]), 'quat_wxyz': LEVEL,
                                 'lin_vel_b': np.zeros(3), 'ang_vel_b': np.zeros(3)}, t, t))
        quad.put('imu', Sample({'ang_vel_b': np.zeros(3)}, t, t))
        thrust = quad.step(t).command[0]
    assert thrust == 0.0


def test_a_ground_reading_below_the_floor_stops_after_the_longest_descent(quad):
    """On the ground with an estimator that reads z = -0.2 m (below the fence's floor: no
    landing evidence): level-and-descend until fallback_max_descent_s (8 s), then off."""
    airborne(quad)
    quad.estop(0.3)
    thrusts = {}
    for t in np.arange(0.3, 8.5, 0.05):
        thrusts[round(float(t), 2)] = fly(quad, float(t), z=-0.2).command[0]
    assert thrusts[8.25] > 0.0 and thrusts[8.35] == 0.0 and thrusts[8.45] == 0.0
