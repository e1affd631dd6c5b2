"""sim2real: train robot policies in simulation, export them with their contract, run them."""

import os
import sys

__version__ = '0.1.0'

# OpenMP threads that finish a parallel region spin before they sleep: by default ~300k
# iterations in GNU libgomp (torch's OpenMP), long enough that threads left spinning after the
# policy's forward pass take the cores from the simulation's threads that step next (a
# quadrotor env step at 4096 envs went from 20 to 25 ms). A short spin keeps back-to-back
# regions fast and frees the cores within microseconds. libgomp reads it when torch loads, so
# it is set here, before sim2real imports torch; a value the user set is kept.
if 'torch' not in sys.modules:
    os.environ.setdefault('GOMP_SPINCOUNT', '10000')
