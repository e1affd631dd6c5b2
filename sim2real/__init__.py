"""sim2real: train robot policies in simulation, export them with their contract, run them."""

__version__ = '0.1.0'
