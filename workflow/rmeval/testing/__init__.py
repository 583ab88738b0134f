"""Builders of local stand-ins for the real models (random weights, the real architecture and tokenizer
layout) used by the quick start's offline route, the tests and the performance scripts."""
