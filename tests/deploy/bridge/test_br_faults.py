"""FaultInjector: each fault with hand-checkable numbers; schedules and their errors."""

import math

import numpy as np
import pytest

from sim2real.deploy.bridge.faults import (
    BridgeEvent, FaultCfg, FaultError, FaultInjector, parse_fault_list, parse_schedule,
    ScheduledFault)


def sample(k):
    """Values of message k: x = [k, -k]."""
    return {'x': np.array([float(k), -float(k)])}


def stamps(released):
    """Stamps of released (values, stamp) pairs."""
    return [stamp for _, stamp in released]


def test_no_fault_passes_through_immediately():
    """Without faults a message offered at t is due at t, values and stamp unchanged."""
    inj = FaultInjector()
    inj.offer('imu', sample(3), 0.5, now_s=0.5)
    (values, stamp), = inj.due('imu', 0.5)
    assert stamp == 0.5 and values['x'].tolist() == [3.0, -3.0]
    assert inj.due('imu', 1.0) == []


def test_drop_keeps_seventy_percent():
    """drop p=0.3 over 10,000 messages keeps 7000 +- 3 sigma (sigma = sqrt(10^4*.3*.7) = 45.8)."""
    inj = FaultInjector(FaultCfg(drop_probability=0.3), seed=1)
    inj.set_active(['drop'], 0.0)
    for k in range(10_000):
        inj.offer('odom', sample(k), k * 0.005, k * 0.005)
    kept = len(inj.due('odom', 100.0))
    assert abs(kept - 7000) <= 3 * math.sqrt(10_000 * 0.3 * 0.7)


def test_delay_releases_at_exactly_stamp_plus_delay():
    """delay 0.01 s, no jitter: offered at 1.0 -> not due at 1.0099, due at 1.01."""
    inj = FaultInjector(FaultCfg(delay_s=0.01, delay_jitter_s=0.0))
    inj.set_active('delay', 1.0)
    inj.offer('imu', sample(1), 1.0, 1.0)
    assert inj.due('imu', 1.0099) == []
    assert stamps(inj.due('imu', 1.01)) == [1.0]


def release_lags(inj, messages):
    """Offer messages 2 ms apart, poll every 0.5 ms until all are out; assert they leave in
    order with their stamps, and return each one's lag from stamp to release [s]."""
    released = []   # (stamp, release time)
    for tick in range(4 * messages + 100):
        t = tick * 0.0005
        if tick % 4 == 0 and tick < 4 * messages:
            inj.offer('imu', sample(tick), t, t)
        released += [(stamp, t) for stamp in stamps(inj.due('imu', t))]
    assert [s for s, _ in released] == [k * 0.002 for k in range(messages)]
    return np.array([r - s for s, r in released])


def test_delay_jitter_is_bounded_and_keeps_order():
    """delay 0.01 + U(0, 0.005): 200 messages 2 ms apart each out 10-15 ms late, in order."""
    inj = FaultInjector(FaultCfg(delay_s=0.01, delay_jitter_s=0.005), seed=2)
    inj.set_active('delay', 0.0)
    lags_s = release_lags(inj, 200)
    assert lags_s.min() >= 0.01 - 1e-9 and lags_s.max() <= 0.015 + 0.0005


def test_latency_spike_holds_then_bursts():
    """spike 0.2 s from onset 0: messages at 0, .05, .1, .15 held until 0.2, then all at once."""
    inj = FaultInjector(FaultCfg(spike_s=0.2))
    inj.set_active(['latency_spike'], 0.0)
    for t in (0.0, 0.05, 0.1, 0.15):
        inj.offer('odom', sample(t), t, t)
        inj.offer('imu', sample(t), t, t)
    assert inj.due('odom', 0.199) == [] and inj.due('imu', 0.199) == []
    assert stamps(inj.due('odom', 0.2)) == [0.0, 0.05, 0.1, 0.15]
    assert stamps(inj.due('imu', 0.2)) == [0.0, 0.05, 0.1, 0.15]
    inj.offer('odom', sample(9), 0.25, 0.25)     # one spike per onset: later ones pass
    assert stamps(inj.due('odom', 0.25)) == [0.25]


def test_frozen_repeats_onset_values_and_stamp():
    """frozen_imu from t=0.05: every message is the one stamped 0.04 (x = 4) until offset."""
    inj = FaultInjector()
    for k in range(5):
        inj.offer('imu', sample(k), k * 0.01, k * 0.01)
    inj.due('imu', 1.0)
    inj.set_active(['frozen_imu'], 0.05)
    for k in range(5, 8):
        inj.offer('imu', sample(k), k * 0.01, k * 0.01)
        inj.offer('odom', sample(k), k * 0.01, k * 0.01)
    frozen = inj.due('imu', 0.08)
    assert stamps(frozen) == [0.04] * 3
    assert all(v['x'].tolist() == [4.0, -4.0] for v, _ in frozen)
    assert stamps(inj.due('odom', 0.08)) == [0.05, 0.06, 0.07]   # odom is not frozen
    inj.set_active([], 0.08)
    inj.offer('imu', sample(8), 0.08, 0.08)
    assert stamps(inj.due('imu', 0.08)) == [0.08]


def test_nan_gives_nan_values_with_advancing_stamps():
    """nan_odom: values NaN with their shapes, stamps 0.0, 0.005, 0.01 as offered."""
    inj = FaultInjector()
    inj.set_active(['nan_odom'], 0.0)
    for k in range(3):
        inj.offer('odom', sample(k), k * 0.005, k * 0.005)
    out = inj.due('odom', 0.01)
    assert stamps(out) == [0.0, 0.005, 0.01]
    assert all(v['x'].shape == (2,) and np.isnan(v['x']).all() for v, _ in out)


def test_command_loss_blocks_commands_only_while_active():
    """command_loss@1+0.5 from origin 10: allowed at 10.99, refused at 11.0-11.49, allowed 11.5."""
    inj = FaultInjector()
    inj.set_schedule('command_loss@1+0.5', origin_s=10.0)
    assert [inj.commands_allowed(t) for t in (10.99, 11.0, 11.49, 11.5)] == [
        True, False, False, True]
    assert inj.pop_events() == [BridgeEvent('fault_on', 'command_loss', 11.0),
                                BridgeEvent('fault_off', 'command_loss', 11.5)]
    assert inj.pop_events() == []


def test_reset_clears_manual_faults_and_restarts_schedule():
    """After reset at 5.0: manual drop off (event), queue empty, schedule counts from 5.0."""
    inj = FaultInjector(FaultCfg(delay_s=1.0, delay_jitter_s=0.0))
    inj.set_schedule('nan_imu@0.5+0.1', origin_s=0.0)
    inj.set_active('drop, delay', 0.0)
    inj.offer('imu', sample(0), 0.0, 0.0)
    inj.pop_events()
    inj.reset(5.0)
    assert inj.update(5.0) == frozenset()
    assert {e.fault for e in inj.pop_events()} == {'drop', 'delay'}
    assert inj.due('imu', 10.0) == []
    assert inj.update(5.5) == {'nan_imu'}


def test_parse_schedule():
    """'nan_imu@2+0.5; drop @ 0 + 1;' -> two entries in order; empty string -> none."""
    assert parse_schedule('nan_imu@2+0.5; drop @ 0 + 1;') == (
        ScheduledFault('nan_imu', 2.0, 0.5), ScheduledFault('drop', 0.0, 1.0))
    assert parse_schedule('') == ()


@pytest.mark.parametrize('text, message', [
    ('bogus@1+1', 'valid: drop, delay'),
    ('nan_imu@x+1', "'name@start_s+duration_s'"),
    ('nan_imu@1', "'name@start_s+duration_s'"),
    ('nan_imu+1', "'name@start_s+duration_s'"),
    ('nan_imu@1+0', 'duration_s > 0'),
    ('nan_imu@-1+1', 'start_s must be >= 0'),
])
def test_parse_schedule_errors(text, message):
    """Malformed entries raise FaultError saying what is wrong."""
    with pytest.raises(FaultError, match=message.replace('+', r'\+')):
        parse_schedule(text)


def test_unknown_names_are_rejected_with_the_valid_list():
    """set_active(['drop', 'nan_gps']) names 'nan_gps' and lists the 8 valid faults."""
    inj = FaultInjector()
    with pytest.raises(FaultError) as info:
        inj.set_active(['drop', 'nan_gps'], 0.0)
    assert "'nan_gps'" in str(info.value)
    assert all(n in str(info.value) for n in parse_fault_list(
        'drop,delay,latency_spike,command_loss,frozen_odom,frozen_imu,nan_odom,nan_imu'))
    assert inj.update(0.0) == frozenset()


def test_nominal_latency_applies_without_faults_and_adds_to_a_delay():
    """Latency 5 ms + U(0, 6 ms), no fault: 300 messages 2 ms apart each out 5-11 ms late, in
    order, stamps unchanged; with 'delay' (10 ms, no jitter) on top, 15-21 ms."""
    for faults, lo_s in (('', 0.005), ('delay', 0.015)):
        inj = FaultInjector(FaultCfg(delay_s=0.01, delay_jitter_s=0.0, latency_s=0.005,
                                     latency_jitter_s=0.006), seed=4)
        inj.set_active(faults, 0.0)
        lags_s = release_lags(inj, 300)
        assert lags_s.min() >= lo_s - 1e-9 and lags_s.max() <= lo_s + 0.006 + 0.0005
        assert lags_s.max() - lags_s.min() > 0.004   # the jitter is there


def test_a_latency_without_jitter_leaves_the_seeded_fault_stream_unchanged():
    """Fixed latency draws nothing: the same seed drops the same messages as without it; a
    jitter draws per message, so the drops differ (what the no-draw rule keeps stable)."""
    kept = []
    for cfg in (FaultCfg(), FaultCfg(latency_s=0.003), FaultCfg(latency_jitter_s=0.001)):
        inj = FaultInjector(cfg, seed=7)
        inj.set_active('drop', 0.0)
        for k in range(100):
            inj.offer('imu', sample(k), 0.01 * k, 0.01 * k)
        kept.append(stamps(inj.due('imu', 2.0)))
    assert kept[0] == kept[1] and 60 <= len(kept[0]) <= 80
    assert kept[2] != kept[0]


def test_hand_config_sets_the_servo_bus_latency_and_other_robots_have_none():
    """config/hand.yaml's sim_bridge: 5 ms + U(0, 6 ms) on every joint state; the quadrotor's
    and quadruped's files keep the default 0 (their trained delays are measured without it)."""
    import pathlib

    import yaml

    from sim2real.deploy.bridge.params import declared_parameters, fault_cfg, validate
    root = pathlib.Path(__file__).resolve().parents[3]
    got = {}
    for robot in ('hand', 'quadrotor', 'quadruped'):
        own = yaml.safe_load((root / 'config' / f'{robot}.yaml').read_text())
        p = {**declared_parameters(robot), **own['sim_bridge']['ros__parameters']}
        validate(p)
        cfg = fault_cfg(p)
        got[robot] = (cfg.latency_s, cfg.latency_jitter_s)
    assert got == {'hand': (0.005, 0.006), 'quadrotor': (0.0, 0.0), 'quadruped': (0.0, 0.0)}
    with pytest.raises(ValueError, match='sensor_latency_s'):
        validate({**p, 'sensor_latency_s': -0.001})


def test_a_robot_fault_transforms_withholds_marks_its_effect_and_acts():
    """The quadrotor twin's glitch_odom through the injector: the first odometry sample after
    onset reads z = 0 (its effect, reported once released), the next 30 ms are withheld,
    then samples pass as they are; a reset while it is scheduled glitches again. An action
    fault sees the time since onset, and None while it is off."""
    from sim2real.deploy.bridge.faults import RobotFault
    from sim2real.deploy.robots.quadrotor.faults import quadrotor_faults
    seen = []
    faults = dict(quadrotor_faults(), push=RobotFault(act=lambda sim, s: seen.append(s)))
    inj = FaultInjector(FaultCfg(), streams=('odom', 'imu'), robot_faults=faults)
    inj.set_schedule('glitch_odom@0.0+10.0', 0.0)
    odom = {'pos_w': np.array([0.0, 0.0, 1.5]), 'quat_wxyz': np.array([1.0, 0, 0, 0]),
            'lin_vel_b': np.zeros(3), 'ang_vel_b': np.zeros(3)}
    for k in range(10):
        inj.offer('odom', odom, 0.005 * k, 0.005 * k)
    out = inj.due('odom', 1.0)
    assert [v['pos_w'][2] for v, _ in out] == [0.0, 1.5, 1.5, 1.5, 1.5]
    assert [s for _, s in out] == pytest.approx([0.0, 0.03, 0.035, 0.04, 0.045])
    assert inj.pop_effects() == ['glitch_odom'] and inj.pop_effects() == []
    inj.reset(1.0)
    inj.offer('odom', odom, 1.0, 1.0)
    assert inj.due('odom', 1.0)[0][0]['pos_w'][2] == 0.0
    inj.act(None, 1.5)
    inj.set_active('push', 2.0)
    inj.act(None, 2.25)
    assert seen == [None, pytest.approx(0.25)]
