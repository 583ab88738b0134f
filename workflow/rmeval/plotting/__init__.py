"""Shared matplotlib plumbing for every benchmark's figures: the Agg backend, colours, fonts, byte-stable
saving (rmeval.plotting.style) and panel layout helpers (rmeval.plotting.layout)."""
