"""The quadrotor's runtime entry: its parameters, profile, checks and command interfaces."""

from sim2real.deploy.robots.quadrotor.params import QuadrotorParams
from sim2real.deploy.robots.quadrotor.profile import check_quadrotor_params, QuadrotorProfile
from sim2real.deploy.runtime.profile import RobotRuntime

RUNTIME = RobotRuntime(
    params_cls=QuadrotorParams,
    make_profile=QuadrotorProfile,
    check_params=check_quadrotor_params,
    command_interfaces={'cmd_vel_legacy': ('thrust_body_rates',),
                        'rotor_speeds': ('rotor_speeds',)},
)
