"""Node parameters of the quadrotor policy node (config/quadrotor.yaml, section policy_node)."""

from __future__ import annotations

from dataclasses import dataclass, field

from sim2real.deploy.runtime.params import RecordParams


@dataclass
class QuadrotorParams(RecordParams):
    """Parameters of the quadrotor policy node (config/quadrotor.yaml, section policy_node)."""

    policy_file: str = ''
    """ONNX policy with the contract inside."""
    robot: str = 'quadrotor'
    """Robot profile: 'quadrotor' here."""
    urdf_file: str = 'quadrotor'
    """Name under urdf/ (sim2real.assets.urdf_path) or a path to a .urdf file."""
    rate_hz: float = 100.0
    """Control tick rate [Hz]; must equal the contract's policy_rate_hz."""
    command_interface: str = 'cmd_vel_legacy'
    """'cmd_vel_legacy' (thrust_body_rates policies) or 'rotor_speeds'."""
    odom_topic: str = 'odom'
    """Odometry topic (nav_msgs/Odometry)."""
    imu_topic: str = 'imu'
    """IMU topic (sensor_msgs/Imu)."""
    setpoint_topic: str = 'setpoint'
    """Position setpoint topic (geometry_msgs/PointStamped)."""
    command_topic: str = 'cmd_vel_legacy'
    """Command topic."""
    legacy_thrust_map: str = 'battery_compensated'
    """cmd_vel_legacy: how the firmware turns the thrust command into thrust
    ('battery_compensated' or 'pwm_2015'; sim2real.deploy.robots.quadrotor.cmd_vel_legacy)."""
    odom_twist_frame: str = 'body'
    """Frame of the odometry message's twist: 'body' (nav_msgs: child_frame_id) or 'world'
    (crazyswarm2's C++ server, from the firmware's world-frame stateEstimateZ.v*)."""
    odom_angular_velocity: bool = True
    """Whether the odometry's angular twist is a body-rate reading (crazyswarm2's C++ server
    leaves it at zero: false takes body rates from imu alone)."""
    odom_gyro_tolerance_rad_s: float = 1.0
    """Largest difference between the odometry's body rates and the gyro's (any axis, samples
    received within 5 ms of each other) before they count as wrong [rad/s]; 0: off."""
    odom_twist_window_s: float = 0.2
    """Window over which the twist must explain the position's motion [s]."""
    odom_twist_tolerance_m: float = 0.03
    """Largest displacement the twist may leave unexplained over that window [m]; 0: off."""
    odom_timeout_s: float = 0.05
    """Odometry older than this on the steady clock latches the fallback [s]."""
    imu_timeout_s: float = 0.05
    """IMU older than this latches the fallback [s]; 0: no IMU stream required."""
    setpoint_timeout_s: float = 0.0
    """Setpoint older than this latches the fallback [s]; 0: no setpoint stream required."""
    hover_target_m: list[float] = field(default_factory=lambda: [0.0, 0.0, 1.5],
                                        metadata={'length': 3})
    """Position target without a setpoint stream [m; world frame]."""
    soft_start_s: float = 0.2
    """Collective thrust ramps from 0 to the policy's over this time after enable [s]."""
    thrust_min_n: float = 0.0
    """Smallest collective thrust commanded while the motors run [N]."""
    thrust_max_n: float = 0.43
    """Largest collective thrust commanded [N]; at most the contract's max_collective_thrust_n
    and what the legacy thrust map reaches at crazyswarm2's 60000 (0.4395 N compensated)."""
    max_body_rate_rad_s: float = 6.0
    """Clamp on each commanded body rate [rad/s]."""
    max_tilt_rad: float = 1.0
    """Tilt (angle between body z and world z) beyond which the fallback latches [rad]."""
    max_speed_m_s: float = 5.0
    """Odometry speed beyond which the fallback latches (outside the trained domain) and the
    descent stops trusting the velocity reading [m/s]."""
    max_ang_vel_rad_s: float = 20.0
    """Body rate (odometry or gyro, any axis) beyond which the fallback latches [rad/s]."""
    geofence_min_m: list[float] = field(default_factory=lambda: [-2.0, -2.0, -0.1],
                                        metadata={'length': 3})
    """Lower corner of the allowed box [m; world frame]."""
    geofence_max_m: list[float] = field(default_factory=lambda: [2.0, 2.0, 3.0],
                                        metadata={'length': 3})
    """Upper corner of the allowed box [m; world frame]."""
    ground_height_m: float = 0.05
    """Below this height the fallback switches the motors off [m]."""
    descend_speed_m_s: float = 0.4
    """Descent speed of the level-and-descend fallback [m/s]."""
    fallback_level_gain: float = 4.0
    """Body rate per unit of horizontal projected gravity in the fallback [rad/s]."""
    fallback_vz_gain: float = 2.0
    """Vertical velocity gain of the fallback [1/s]."""
    fallback_blind_thrust_fraction: float = 0.9
    """Fallback thrust without fresh odometry, as a fraction of hover thrust."""
    fallback_max_descent_s: float = 8.0
    """A fallback switches the motors off after this time [s] (a descent at 0.4 m/s from the
    geofence's 3 m ceiling takes 7.4 s)."""
    diagnostics_period_s: float = 1.0
    """Period of /diagnostics messages [s]."""
