"""Simulation backends: batched MuJoCo (CPU), URDF to MJCF, actuator models."""
