"""Crazyflie 2.1-class quadrotor: the deploy-side folder (params, runtime profile)."""
