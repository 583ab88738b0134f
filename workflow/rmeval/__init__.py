"""rmeval: benchmark RLHF reward models for group fairness and math robustness.

Heavy libraries (torch, transformers, pandas, matplotlib) are imported lazily inside
the commands that need them, so `rmeval --help` and the statistics commands start fast.
"""

__version__ = "0.1.0"
