"""The hand's identification run: its ordinary rotation for 40 s. The rotation policy takes
no operator command; its gait already moves every joint through its range with the cube in
contact, which is what the hand's box parameters act on."""

from __future__ import annotations

import numpy as np

from sim2real.deploy.runtime.excitation import Excitation

DURATION_S = 40.0
"""Length of the run [s]."""


def excitation(node: dict) -> Excitation:
    """No operator command: the policy's own rotation for DURATION_S."""
    return Excitation('', '', '', np.zeros(0), np.zeros((0, 0)), DURATION_S,
                      f'the ordinary in-hand rotation for {DURATION_S:g} s')
