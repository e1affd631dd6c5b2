"""ROS-free deploy runtime core: numpy, onnxruntime, Pinocchio and the contract only.

The policy node feeds samples with put(), calls step(now_s) at the contract's rate and
publishes StepResult.command; time is injected, so everything here is tested without ROS.
"""

from sim2real.contract import ContractError
from sim2real.deploy.runtime.params import (
    JointParams, load_params, parameter_defaults, ParamError)
from sim2real.deploy.runtime.policy import PolicyRunner, read_policy_contract
from sim2real.deploy.runtime.runtime import Runtime, StepResult
from sim2real.deploy.runtime.sensors import Sample, SensorStore, Watchdog

__all__ = [
    'ContractError', 'JointParams', 'load_params', 'parameter_defaults', 'ParamError',
    'PolicyRunner', 'read_policy_contract', 'Runtime', 'Sample',
    'SensorStore', 'StepResult', 'Watchdog',
]
