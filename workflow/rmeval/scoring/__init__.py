"""The scoring engine: token-budget batches, truncation flags, checkpoint/resume, OOM back-off, metadata."""
