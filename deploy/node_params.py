"""Parameter hygiene shared by the rclpy nodes: refuse overrides that no parameter declares.

rclpy silently ignores a parameter-file entry or ``-p name:=value`` that the node never
declares, so a typo (``odom_timeout`` for ``odom_timeout_s``) would fly with the default.
"""

from __future__ import annotations

from rclpy.node import Node

from sim2real.deploy.runtime.params import unknown_parameter

# parameters every rclpy node accepts without declaring them
_BUILT_IN = {'use_sim_time', 'start_type_description_service'}


def check_overrides(node: Node, declared) -> None:
    """Raise ParamError naming the first override not in declared (with the closest name)."""
    overrides = set(getattr(node, '_parameter_overrides', {}))
    for key in sorted(overrides - set(declared) - _BUILT_IN):
        raise unknown_parameter(node.get_name(), key, declared)
