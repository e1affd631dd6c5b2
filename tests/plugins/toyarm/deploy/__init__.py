"""toyarm's deploy-side folder: node parameters, runtime, ROS I/O, simulated twin, HIL."""
