"""The node's flight recorder: what it received and did, written to MCAP off the control
thread (sim2real.deploy.record.writer) with ROS 2 message schemas (msgdefs)."""
