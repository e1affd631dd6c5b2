"""The LEAP-class hand's deploy folder: node parameters, runtime, ROS I/O, HIL twin."""
