"""ROS-free core of the HIL bridge: fault injection and the bridge parameters (each robot's
simulated twin lives in its folder, sim2real.deploy.robots)."""

from sim2real.deploy.bridge.faults import (
    BridgeEvent, fault_names, FaultCfg, FaultError, FaultInjector, parse_fault_list,
    parse_schedule, ScheduledFault)

__all__ = ['BridgeEvent', 'fault_names', 'FaultCfg', 'FaultError', 'FaultInjector',
           'parse_fault_list', 'parse_schedule', 'ScheduledFault']
