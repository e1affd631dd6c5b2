"""ROS-free core of the HIL bridge: fault injection and the simulated quadrotor."""

from sim2real.deploy.bridge.faults import (
    BridgeEvent, FAULT_NAMES, FaultCfg, FaultError, FaultInjector, parse_fault_list,
    parse_schedule, ScheduledFault)

__all__ = ['BridgeEvent', 'FAULT_NAMES', 'FaultCfg', 'FaultError', 'FaultInjector',
           'parse_fault_list', 'parse_schedule', 'ScheduledFault']
