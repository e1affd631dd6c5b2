"""System identification from flight logs: the sim-to-real gap and the robot's parameters."""
