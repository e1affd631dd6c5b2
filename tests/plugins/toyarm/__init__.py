"""toyarm: a robot added to sim2real as a plug-in folder, with no edit to sim2real itself.

A fixed-base two-joint planar arm (shoulder and elbow about vertical axes) that reaches a
target point in its plane. Its URDF (``toyarm.urdf`` beside this file) is written by the
test that installs the folder (tests/system/test_toyarm_plugin.py). Both hooks import lazily: the
policy node imports the deploy side only.
"""


def register_tasks() -> None:
    """Register the task 'toyarm-reach'."""
    from toyarm.task import register
    register()


def register_robots() -> None:
    """Register the deploy-side robot 'toyarm' (the folder toyarm/deploy)."""
    from sim2real.deploy.robots import register_robot
    register_robot('toyarm', 'toyarm.deploy')
