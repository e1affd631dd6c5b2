"""Hardware-in-the-loop runs: the policy node against the simulated robot over real DDS."""
