"""ROS-free deploy runtime and thin rclpy nodes (imported as ``sim2real.deploy``)."""
