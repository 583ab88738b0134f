"""rmeval: benchmark RLHF reward models for group fairness, math robustness and capability.

Heavy libraries (torch, transformers, pandas, matplotlib) are imported lazily inside
the commands that need them, so `rmeval --help` and the statistics commands start fast.
"""

__version__ = "0.1.0"
