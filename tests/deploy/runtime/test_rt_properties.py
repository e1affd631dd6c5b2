"""Property tests: no command outside its limits, no NaN out, fallback on the latching tick.

6,000 generated runtime cases here (3,000 quadrotor, 3,000 joint robot) plus 4,000 filter
cases in test_rt_properties_filters.py: 10,000 in total. Random robot limits (quadrotor with
either action kind, joint robots with every joint action kind); samples with NaN, Inf and
finite extremes (1e300, 1e-320), zero and unnormalized quaternions, joint names missing,
extra, listed twice, reordered or with arrays too short; stamps new, repeated, older, an
hour ahead or restarting far back; receive times in the future; bursts of up to 5 samples
between two ticks; the steady clock stepping back; random enable / estop / disable; single
glitched odometry positions (below the ground, outside the geofence) between fresh IMU
samples, and joint readings past their limits at ordinary velocities.
The test keeps its own record of what a latch condition is (an oracle written from the spec,
sensor_oracle.py) and checks the runtime against it after every tick; no exception may
escape, and after each sequence good data must let the robot be enabled again.
"""

import dataclasses
import math

from hypothesis import given, HealthCheck, settings
from hypothesis import strategies as st
import numpy as np
import pytest

from sim2real.contract import ActionSpec
from sim2real.deploy.runtime import filters, PolicyRunner, Runtime, Sample
from sim2real.deploy.runtime.contract_check import check_urdf
from sim2real.deploy.robots.quadrotor.params import QuadrotorParams
from sim2real.deploy.robots.quadruped.params import QuadrupedParams
from tests.deploy.runtime.sensor_oracle import Oracle

SETTINGS = dict(deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
NUM_QUAD, NUM_JOINT = 3000, 3000
WILD = [math.nan, math.inf, -math.inf, 1e300, -1e300, 1e-320]
DT_S = [0.0, 0.004, 0.01, 0.01, 0.01, 0.02, 0.049, 0.06, 0.5, 9.0, -0.01, -0.5]
CORRUPT = [None, None, None, None] + WILD
SEEDS = st.integers(0, 2 ** 32 - 1)
LEVEL = np.array([1.0, 0.0, 0.0, 0.0])
STAMPS = ['new'] * 6 + ['repeat', 'old', 'ahead', 'restart']
"""new: source clock = steady + offset; old: 1 s back; ahead: an hour ahead (once); restart:
the source clock restarts 10^6 s earlier and continues from there."""
QUATS = [None] * 6 + ['zero', 'double', 'huge', 'tiny', 'slightly']
"""Quaternion faults: 0, x2, x1e300, x1e-320 (all implausible) and x1.05 (accepted)."""
BURST = [1, 1, 1, 1, 2, 5]
"""Samples of one stream between two ticks (bursts faster than the tick)."""


def quat_from_rp(roll, pitch):
    """Unit quaternion (w, x, y, z) of roll about x then pitch about y."""
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    return np.array([cr * cp, sr * cp, cr * sp, -sr * sp])


def corrupted(rng, array, wild):
    """array with one random element replaced by wild (NaN, +-Inf, +-1e300, 1e-320)."""
    if wild is not None:
        array = array.copy()
        array[rng.integers(len(array))] = wild
    return array


def faulty_quat(rng, quat):
    """quat scaled by a random quaternion fault (or as it is)."""
    fault = QUATS[rng.integers(len(QUATS))]
    scale = {None: 1.0, 'zero': 0.0, 'double': 2.0, 'huge': 1e300, 'tiny': 1e-320,
             'slightly': 1.05}[fault]
    return quat * scale


EVENTS = st.lists(st.integers(0, 2 ** 64 - 1), min_size=1, max_size=10)
"""Each event is a code seeding its time step, operation, stamps, corruption and values."""


class Clock:
    """The source clock of the sensor streams: steady time + an offset that can jump."""

    def __init__(self):
        """Source clock 1000 s ahead of the steady clock."""
        self.offset, self.last = 1000.0, {}

    def stamp(self, stream, mode, now_s, k):
        """A stamp of the given mode for the k-th sample of a burst at steady time now_s."""
        if mode == 'restart':
            self.offset -= 1e6
        base = self.last.get(stream, now_s + self.offset)
        stamp = {'new': now_s + self.offset + 1e-4 * k, 'repeat': base, 'old': base - 1.0,
                 'ahead': now_s + self.offset + 3600.0,
                 'restart': now_s + self.offset + 1e-4 * k}[mode]
        if mode != 'ahead':
            self.last[stream] = stamp
        return stamp


def run_sequence(runtime, oracle, codes, make_values, ops, latch, check_command):
    """Apply each coded event, step, and check the command and the state after every tick.

    'healthy' puts clean fresh samples on every stream; a stream name puts a burst of
    samples that may be corrupted and carry any stamp mode; enable / disable / estop act.
    No exception may escape put(), enable() or step().
    """
    now, clock, previous = 0.0, Clock(), None
    for code in codes:
        rng = np.random.default_rng(code)
        now = max(now + DT_S[rng.integers(len(DT_S))], 0.0)
        op = ops[rng.integers(len(ops))]
        if op == 'healthy':
            puts = [(name, make_values(name, rng, None, True), 'new', now)
                    for name in oracle.shapes]
        elif op in GLITCHES:   # one fresh sample of a stream, plausible but for one value
            stream, kind = GLITCHES[op]
            puts = [(stream, make_values(stream, rng, None, kind), 'new', now)]
        elif op in oracle.shapes:
            mode, wild = STAMPS[rng.integers(len(STAMPS))], CORRUPT[rng.integers(len(CORRUPT))]
            future = now + 5.0 if rng.integers(20) == 0 else now   # received in the future
            puts = [(op, make_values(op, rng, wild, False), mode, future)
                    for _ in range(BURST[rng.integers(len(BURST))])]
        else:
            puts = []
            if op == 'enable':
                oracle.clock(now)
            apply_op(runtime, op, now, lambda: latch(now))
        for k, (stream, values, mode, received) in enumerate(puts):
            sample = Sample(values, clock.stamp(stream, mode, now, k), received)
            runtime.put(stream, sample)
            oracle.put(stream, sample)
        oracle.clock(now)
        was = runtime.state
        result = runtime.step(now)
        check_command(result, previous, was)
        check_state(runtime, was, result, latch(now), op)
        oracle.end_tick()
        previous = result
    recover(runtime, oracle, now, clock, make_values)


GLITCHES = {'odom_glitch': ('odom', 'glitch'), 'imu_fresh': ('imu', True),
            'past_limit': ('joint_state', 'past_limit')}
"""Ops that put one fresh sample: an odometry position glitch, a calm IMU sample (an
odometry gap in between), a joint reading past its limit at an ordinary velocity."""


def recover(runtime, oracle, now, clock, make_values):
    """Good data again (level, fresh, on every stream, 5 ticks): enable succeeds, and the
    robot stays armed on the next tick, whatever bad data came before."""
    now = max(now, oracle.now)
    for k in range(5):
        now += 0.01
        oracle.clock(now)
        for stream in oracle.shapes:
            sample = Sample(make_values(stream, None, None, 'level'),
                            clock.stamp(stream, 'new', now, 0), now)
            runtime.put(stream, sample)
            oracle.put(stream, sample)
        runtime.step(now)
        oracle.end_tick()
    oracle.clock(now)
    ok, reason = runtime.enable(now)
    assert ok, reason
    assert runtime.step(now + 0.001).state in ('soft_start', 'active'), runtime.machine.reason


# -- quadrotor ---------------------------------------------------------------------------
@pytest.fixture(scope='module')
def quad_setup(quad_policy, quad_contract):
    """(policy runner, {kind: contract}, Pinocchio model) shared by every case."""
    rotor = dataclasses.replace(quad_contract, action=ActionSpec('rotor_speeds', 4, params={
        'min_speed_rad_s': 0.0, 'max_speed_rad_s': 2272.6281256068564}))
    model = check_urdf(quad_contract, terms_urdf())
    return PolicyRunner(quad_policy), {'thrust_body_rates': quad_contract,
                                       'rotor_speeds': rotor}, model


def terms_urdf():
    """Path of the quadrotor URDF."""
    from sim2real.assets import urdf_path
    return urdf_path('quadrotor')


def quad_params(kind, seed):
    """Random quadrotor limits from seed, inside the contract's (max collective 0.595 N,
    body rates 6 rad/s)."""
    rng = np.random.default_rng(seed)
    thrust_max = rng.uniform(0.05, 0.439 if kind == 'thrust_body_rates' else 0.595)
    return QuadrotorParams(
        command_interface='cmd_vel_legacy' if kind == 'thrust_body_rates' else 'rotor_speeds',
        thrust_max_n=thrust_max, thrust_min_n=rng.uniform(0.0, thrust_max),
        max_body_rate_rad_s=rng.uniform(0.1, 6.0), max_tilt_rad=rng.uniform(0.1, 3.0),
        max_speed_m_s=rng.uniform(0.5, 20.0), max_ang_vel_rad_s=rng.uniform(1.0, 40.0),
        odom_timeout_s=rng.choice([0.02, 0.05, 0.1]), imu_timeout_s=rng.choice([0.0, 0.05]),
        setpoint_timeout_s=rng.choice([0.0, 0.0, 0.1]), soft_start_s=rng.choice([0.0, 0.2]),
        ground_height_m=rng.uniform(0.0, 0.5), fallback_level_gain=rng.uniform(0.0, 20.0),
        fallback_vz_gain=rng.uniform(0.0, 10.0), fallback_max_descent_s=rng.uniform(0.0, 10.0),
        # random positions jump and rates disagree: the twist and gyro checks have their own
        # tests (test_rt_twist_check.py); a window holding a 1e300 twist would latch them
        odom_twist_tolerance_m=0.0, odom_gyro_tolerance_rad_s=0.0)


QUAD_OPS = ['healthy'] * 6 + ['odom'] * 2 + ['odom_glitch', 'imu_fresh', 'imu_fresh'] + [
    'imu', 'setpoint', 'enable', 'enable', 'disable', 'estop', 'none']
GLITCH_Z_M = [0.0, -0.05, -0.5, -3.0, -1e3]
"""Heights of a glitched odometry sample: at or just below the ground, or far below it."""


def glitched_odom(rng):
    """A calm sample near the hover point whose position is a glitch: below the ground, or
    far outside the geofence horizontally."""
    values = {'pos_w': rng.uniform([-1.0, -1.0, 1.0], [1.0, 1.0, 2.0]), 'quat_wxyz': LEVEL,
              'lin_vel_b': rng.uniform(-0.3, 0.3, 3), 'ang_vel_b': rng.uniform(-1, 1, 3)}
    if rng.integers(4):
        values['pos_w'][2] = GLITCH_Z_M[rng.integers(len(GLITCH_Z_M))]
    else:
        values['pos_w'][rng.integers(2)] = rng.choice([-50.0, 50.0])
    return values


def quad_values(stream, rng, wild, healthy):
    """odom / imu / setpoint values: level at the hover point ('level'), near hover (True),
    or wild (False) with one element maybe corrupted and the quaternion maybe faulty."""
    if healthy == 'glitch':
        return glitched_odom(rng)
    if healthy == 'level':
        return {'odom': {'pos_w': np.array([0.0, 0.0, 1.5]), 'quat_wxyz': LEVEL,
                         'lin_vel_b': np.zeros(3), 'ang_vel_b': np.zeros(3)},
                'imu': {'ang_vel_b': np.zeros(3)},
                'setpoint': {'pos_w': np.array([0.0, 0.0, 1.5])}}[stream]
    if stream == 'odom':
        tilt, span = (0.2, 1.0) if healthy else (3.2, 20.0)
        pos = rng.uniform([-2.5, -2.5, -0.2], [2.5, 2.5, 3.5])
        if healthy:
            pos = rng.uniform([-1.0, -1.0, 1.0], [1.0, 1.0, 2.0])
        quat = quat_from_rp(rng.uniform(-tilt, tilt), rng.uniform(-tilt / 2, tilt / 2))
        if not healthy:
            quat = faulty_quat(rng, quat)
        parts = [pos, quat, rng.uniform(-span, span, 3)]
        field = rng.integers(3)
        parts[field] = corrupted(rng, parts[field], wild)
        return dict(zip(('pos_w', 'quat_wxyz', 'lin_vel_b'), parts),
                    ang_vel_b=rng.uniform(-span, span, 3))
    if stream == 'imu':
        return {'ang_vel_b': corrupted(rng, rng.uniform(-30, 30, 3), wild)}
    return {'pos_w': corrupted(rng, rng.uniform(-3, 3, 3), wild)}


def check_quad_command(command, kind, params, kf):
    """Every limit of the final clamp holds and nothing is NaN."""
    assert np.isfinite(command).all()
    if kind == 'thrust_body_rates':
        assert command[0] == 0.0 or params.thrust_min_n <= command[0] <= params.thrust_max_n
        assert np.all(np.abs(command[1:]) <= params.max_body_rate_rad_s)
    else:
        assert np.all((command >= 0.0) & (command <= 2272.6281256068564))
        assert kf * np.sum(command ** 2) <= params.thrust_max_n


def quad_latch(oracle, params):
    """Whether a quadrotor latch condition holds at this tick (estop aside)."""
    if oracle.problem or oracle.backwards:
        return True
    if any(oracle.stale(s, t) for s, t in (
            ('odom', params.odom_timeout_s), ('imu', params.imu_timeout_s),
            ('setpoint', params.setpoint_timeout_s))):
        return True
    if oracle.tilted('odom', params.max_tilt_rad):
        return True
    pos = oracle.values['odom']['pos_w']
    if np.any(pos < params.geofence_min_m) or np.any(pos > params.geofence_max_m):
        return True
    if not np.linalg.norm(oracle.values['odom']['lin_vel_b']) <= params.max_speed_m_s:
        return True
    rates = [oracle.values[s]['ang_vel_b'] for s in ('odom', 'imu') if s in oracle.values]
    return not all(np.max(np.abs(w)) <= params.max_ang_vel_rad_s for w in rates)


class LandingSpec:
    """The quadrotor's landing rule as the docs state it, for an airborne fallback: the motors
    may be off only after 3 consecutive distinct (newly stored), fresh odometry samples above
    the geofence's floor and below ground_height_m, seen at ticks since the latch, or after
    fallback_max_descent_s in the fallback. Not a model of the rule's every decision: it
    names what must have happened before a cut."""

    def __init__(self, oracle, params):
        """Nothing seen; the oracle's view of the samples, the node's parameters."""
        self.oracle, self.params = oracle, params
        self.airborne, self.evidence = False, False
        self.low, self.counted, self.latched_s = 0, None, 0.0

    def tick(self, was, result, now_s):
        """Follow one tick's state; assert a cut in an airborne fallback had its evidence."""
        if result.state != 'fallback':
            self.airborne = False
            return
        if was != 'fallback':   # the latch: airborne when the motors were running
            self.airborne = was in ('soft_start', 'active')
            self.evidence, self.low, self.counted, self.latched_s = False, 0, None, now_s
        self.evidence |= now_s - self.latched_s > self.params.fallback_max_descent_s
        if not self.oracle.stale('odom', self.params.odom_timeout_s) and (
                self.oracle.stored.get('odom') != self.counted):
            self.counted = self.oracle.stored.get('odom')
            z_m = np.asarray(self.oracle.values['odom']['pos_w'])[2]
            low = self.params.geofence_min_m[2] <= z_m < self.params.ground_height_m
            self.low = self.low + 1 if low else 0
            self.evidence |= self.low >= 3
        if self.airborne and not np.any(result.command):
            assert self.evidence, 'motors off in the air without landing evidence'


def start(runtime, oracle, make_values):
    """Level samples on every stream at t = 0, then enable (which must succeed)."""
    oracle.clock(0.0)
    for stream in oracle.shapes:
        sample = Sample(make_values(stream, None, None, 'level'), 0.0, 0.0)
        runtime.put(stream, sample)
        oracle.put(stream, sample)
    assert runtime.enable(0.0) == (True, '')


@settings(max_examples=NUM_QUAD, **SETTINGS)
@given(kind=st.sampled_from(['thrust_body_rates', 'rotor_speeds']), seed=SEEDS, codes=EVENTS)
def test_quadrotor_sequences_respect_limits_and_latch_on_time(quad_setup, kind, seed, codes):
    """Random limits and event sequences: commands within limits, fallback on the latching
    tick, no exception, and enabled again once the data is good."""
    policy, contracts, model = quad_setup
    params = quad_params(kind, seed)
    runtime = Runtime(contracts[kind], params, policy, model)
    kf = contracts[kind].robot_params['rotors']['thrust_coefficient']
    oracle = Oracle(runtime.profile.shapes)
    landing = LandingSpec(oracle, params)
    start(runtime, oracle, quad_values)

    def check(result, _previous, was):
        check_quad_command(result.command, kind, params, kf)
        landing.tick(was, result, oracle.now)
    run_sequence(runtime, oracle, codes, quad_values, QUAD_OPS,
                 lambda now: quad_latch(oracle, params), check)


def apply_op(runtime, op, now_s, latch_holds):
    """enable / disable / estop; enable succeeds exactly when no latch condition holds."""
    before = runtime.state
    if op == 'enable':
        ok, _ = runtime.enable(now_s)
        if before in ('soft_start', 'active'):
            assert ok and runtime.state == before
        else:
            assert ok == (not latch_holds())
            assert runtime.state == ('soft_start' if ok else before)
    elif op == 'disable':
        runtime.disable(now_s)
        assert runtime.state == 'inactive'
    elif op == 'estop':
        runtime.estop(now_s)
        assert (runtime.state, runtime.machine.reason) == ('fallback', 'estop')


def check_state(runtime, was, result, latch_holds, op):
    """Armed ticks fall back exactly when a latch condition holds; fallback stays latched.

    Besides the sensor latches, an observation that overflows float32 (an unclipped term fed
    1e300) latches 'nan:observation' and a non-finite policy output 'nan:action'.
    """
    if was in ('soft_start', 'active'):
        if not latch_holds:
            with np.errstate(all='ignore'):
                latch_holds = not np.isfinite(runtime.observation()).all()
            assert latch_holds == (result.reason == 'nan:observation')
        if not latch_holds and result.reason == 'nan:action':
            latch_holds = not np.isfinite(result.action).all()
        assert (result.state == 'fallback') == latch_holds
    elif was == 'fallback':
        assert result.state == 'fallback' and result.reason
    if op == 'estop':
        assert result.reason == 'estop'


# -- joint robots ------------------------------------------------------------------------
JOINT_KINDS = {
    'joint_position_offset': {'scale': 0.5},
    'joint_position_delta': {'scale': 0.1},
    'joint_position_ema': {'scale': 0.5, 'alpha': 0.3},
    'joint_position_rate_capped': {'scale': 0.5, 'max_rate_rad_s': 3.0},
}
URDF_MIN, URDF_MAX = np.array([-2.0, -2.5, -1.0]), np.array([2.0, 0.5, 1.0])
URDF_EFFORT_NM = np.array([30.0, 30.0, 10.0])


@pytest.fixture(scope='module')
def joint_setup(joint_policy, joint_contract, joint_urdf):
    """(policy runner, {kind: contract}, Pinocchio model) shared by every case."""
    contracts = {kind: dataclasses.replace(joint_contract, action=ActionSpec(kind, 3, params=p))
                 for kind, p in JOINT_KINDS.items()}
    return PolicyRunner(joint_policy), contracts, check_urdf(joint_contract, joint_urdf)


def joint_params(seed):
    """Random gains and limits from seed, limits inside the URDF's, in contract joint order."""
    rng = np.random.default_rng(seed)
    mid = (URDF_MIN + URDF_MAX) / 2
    params = QuadrupedParams(
        robot='testarm', rate_hz=50.0, joint_names=['hip', 'knee', 'ankle'],
        kp=list(rng.uniform(0.0, 100.0, 3)), kd=list(rng.uniform(0.0, 5.0, 3)),
        torque_limit_nm=list(rng.uniform(0.1, URDF_EFFORT_NM)),
        pos_min_rad=list(rng.uniform(URDF_MIN, mid - 0.05)),
        pos_max_rad=list(rng.uniform(mid + 0.05, URDF_MAX)),
        max_rate_rad_s=list(rng.uniform(0.1, 20.0, 3)), max_tilt_rad=rng.uniform(0.1, 3.0),
        joint_vel_limit_rad_s=rng.uniform(1.0, 30.0),
        joint_state_timeout_s=rng.choice([0.02, 0.05]), imu_timeout_s=rng.choice([0.0, 0.05]),
        command_timeout_s=rng.choice([0.0, 0.0, 0.1]), soft_start_s=rng.choice([0.0, 0.5]),
        fallback=str(rng.choice(['damping', 'hold'])), damping_kd=rng.uniform(0.0, 5.0))
    if params.fallback == 'hold' and rng.random() < 0.5:   # a hold that relaxes, at its own cap
        params.hold_s = float(rng.choice([0.0, 0.1]))
        params.relax_pose_rad = list(rng.uniform(params.pos_min_rad, params.pos_max_rad))
        params.relax_max_rate_rad_s = list(rng.uniform(0.1, 20.0, 3))
    return params


JOINT_OPS = ['healthy'] * 6 + ['joint_state'] * 2 + ['past_limit'] + [
    'imu', 'command', 'enable', 'enable', 'disable', 'estop', 'none']


NAME_FAULTS = [None] * 4 + ['reordered', 'extra', 'missing', 'twice', 'short']
"""How a wild joint_state names its joints: not at all (contract order), reversed, with an
extra joint, one missing, one listed twice, or one position short."""


def named(rng, q, qd):
    """A joint_state of contract-order arrays under a random naming fault."""
    fault = NAME_FAULTS[rng.integers(len(NAME_FAULTS))]
    names = ['hip', 'knee', 'ankle']
    if fault is None:
        return {'pos_rad': q, 'vel_rad_s': qd}
    if fault == 'reordered':
        return {'names': names[::-1], 'pos_rad': q[::-1], 'vel_rad_s': qd[::-1]}
    if fault == 'extra':
        return {'names': names + ['gripper'], 'pos_rad': np.append(q, 9.0),
                'vel_rad_s': np.append(qd, 0.0)}
    if fault == 'missing':
        return {'names': names[1:], 'pos_rad': q[1:], 'vel_rad_s': qd[1:]}
    if fault == 'twice':
        return {'names': names + ['knee'], 'pos_rad': np.append(q, 0.0),
                'vel_rad_s': np.append(qd, 0.0)}
    return {'names': names, 'pos_rad': q[:2], 'vel_rad_s': qd}


def joint_values(stream, rng, wild, healthy):
    """joint_state / imu / command values: standing ('level'), calm (True) or wild (False)
    with one element maybe corrupted, joint names maybe faulty, the quaternion maybe too."""
    if healthy == 'past_limit':   # one joint past its URDF limit, every velocity ordinary
        q, joint = rng.uniform(-0.5, 0.5, 3), rng.integers(3)
        over = 0.1 + rng.choice([1e-3, 0.05, 1.0])
        q[joint] = URDF_MAX[joint] + over if rng.integers(2) else URDF_MIN[joint] - over
        return {'pos_rad': q, 'vel_rad_s': rng.uniform(-0.5, 0.5, 3)}
    if healthy == 'level':
        return {'joint_state': {'pos_rad': np.array([0.0, -0.5, 0.0]), 'vel_rad_s': np.zeros(3)},
                'imu': {'quat_wxyz': LEVEL, 'ang_vel_b': np.zeros(3)},
                'command': {'velocity_command': np.zeros(3)}}[stream]
    if stream == 'joint_state':
        span_q, span_qd = (0.5, 2.0) if healthy else (3.0, 40.0)
        q, qd = rng.uniform(-span_q, span_q, 3), rng.uniform(-span_qd, span_qd, 3)
        if rng.integers(2):
            q = corrupted(rng, q, wild)
        else:
            qd = corrupted(rng, qd, wild)
        return {'pos_rad': q, 'vel_rad_s': qd} if healthy else named(rng, q, qd)
    if stream == 'imu':
        tilt = 0.1 if healthy else 3.2
        quat = quat_from_rp(rng.uniform(-tilt, tilt), rng.uniform(-tilt / 2, tilt / 2))
        if not healthy:
            quat = faulty_quat(rng, quat)
        return {'quat_wxyz': corrupted(rng, quat, wild), 'ang_vel_b': np.zeros(3)}
    return {'velocity_command': corrupted(rng, rng.uniform(-2, 2, 3), wild)}


def joint_latch(oracle, params):
    """Whether a joint-robot latch condition holds at this tick (estop aside)."""
    if oracle.problem or oracle.backwards:
        return True
    if any(oracle.stale(s, t) for s, t in (
            ('joint_state', params.joint_state_timeout_s), ('imu', params.imu_timeout_s),
            ('command', params.command_timeout_s))):
        return True
    if 'imu' in oracle.values and oracle.tilted('imu', params.max_tilt_rad):
        return True
    q = oracle.values['joint_state']['pos_rad']
    if np.any(q < URDF_MIN - 0.1) or np.any(q > URDF_MAX + 0.1):   # an encoder fault
        return True
    return bool(np.any(np.abs(oracle.values['joint_state']['vel_rad_s'])
                       > params.joint_vel_limit_rad_s))


def check_joint_command(result, previous, params, oracle):
    """Targets within the limits, gains as the state requires, torque-feasible when armed,
    and a damping fallback's targets within the rate limit of the previous tick's."""
    command, state = result.command, result.state
    target, kp, kd = command[:3], command[3:6], command[6:]
    assert np.isfinite(command).all()
    assert np.all((params.pos_min_rad <= target) & (target <= params.pos_max_rad))
    if state == 'inactive':
        assert not kp.any() and not kd.any()
    elif state == 'fallback' and params.fallback == 'damping':
        assert not kp.any() and np.all(kd == params.damping_kd)
    else:
        np.testing.assert_array_equal(np.concatenate([kp, kd]), params.kp + params.kd)
    if state == 'fallback' and previous is not None:
        check_fallback_rate(target, previous.command[:3], params, oracle, kp, kd)
    if state in ('soft_start', 'active'):
        q = oracle.values['joint_state']['pos_rad']
        qd = oracle.values['joint_state']['vel_rad_s']
        lo, hi = filters.torque_bounds(q, qd, kp, kd, params.torque_limit_nm)
        both = (kp > 0) & (np.maximum(lo, params.pos_min_rad) <= np.minimum(
            hi, params.pos_max_rad))
        torque = np.abs(kp * (target - q) - kd * qd)
        limit = np.asarray(params.torque_limit_nm)
        assert np.all(~both | (torque <= limit * (1 + 1e-9) + 1e-9))


def check_fallback_rate(target, previous, params, oracle, kp, kd):
    """A fallback target moves at most max_rate_rad_s (or, relaxing, relax_max_rate_rad_s) /
    rate_hz from the previous tick's, unless the torque limit moved it (it outranks the rate
    limit: the target then sits on a bound of the torque-feasible interval or of the
    position box)."""
    step = np.maximum(params.max_rate_rad_s,
                      params.relax_max_rate_rad_s or params.max_rate_rad_s) / params.rate_hz
    moved = np.abs(target - previous) > step * (1 + 1e-9) + 1e-12
    if not moved.any():
        return
    q, qd = (oracle.values['joint_state'][k] for k in ('pos_rad', 'vel_rad_s'))
    lo, hi = filters.torque_bounds(q, qd, kp, kd, params.torque_limit_nm)
    bounds = np.stack([lo, hi, params.pos_min_rad, params.pos_max_rad])
    on_bound = np.isclose(bounds, target, rtol=1e-9, atol=1e-12).any(axis=0)
    assert np.all(on_bound[moved]), (target, previous, step)


@settings(max_examples=NUM_JOINT, **SETTINGS)
@given(kind=st.sampled_from(sorted(JOINT_KINDS)), seed=SEEDS, codes=EVENTS)
def test_joint_sequences_respect_limits_and_latch_on_time(joint_setup, kind, seed, codes):
    """Random gains, limits, kinds, events, joint names: targets in limits, torque-feasible,
    on-time latch, no exception, and enabled again once the data is good."""
    policy, contracts, model = joint_setup
    params = joint_params(seed)
    trained = dict(contracts[kind].action.params, kp_nm_per_rad=params.kp,
                   kd_nm_s_per_rad=params.kd)   # the gains this case's policy trained with
    contract = dataclasses.replace(contracts[kind], action=dataclasses.replace(
        contracts[kind].action, params=trained))
    runtime = Runtime(contract, params, policy, model)
    oracle = Oracle(runtime.profile.shapes, contract.joint_names)
    start(runtime, oracle, joint_values)
    run_sequence(runtime, oracle, codes, joint_values, JOINT_OPS,
                 lambda now: joint_latch(oracle, params),
                 lambda result, previous, _: check_joint_command(result, previous, params,
                                                                 oracle))
