"""Stratified bootstrap of group means and within-group sums of squares (resampling within each group)."""

from __future__ import annotations

import numpy as np

_CHUNK = 256  # replicates per vectorised block: bounds memory at ~_CHUNK * n floats per group


def stratified_means(samples: list[np.ndarray], n_bootstrap: int,
                     rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Per replicate, the group means (B, k) and the within-group sum of squares (B,)."""
    k = len(samples)
    means = np.empty((n_bootstrap, k))
    ss_within = np.zeros(n_bootstrap)
    for g, values in enumerate(samples):
        centred = values - values.mean()  # centring keeps sum-of-squares arithmetic stable
        for start in range(0, n_bootstrap, _CHUNK):
            stop = min(start + _CHUNK, n_bootstrap)
            draw = centred[rng.integers(0, values.size, size=(stop - start, values.size))]
            draw_mean = draw.mean(axis=1)
            means[start:stop, g] = draw_mean + values.mean()
            ss_within[start:stop] += (draw**2).sum(axis=1) - values.size * draw_mean**2
    return means, np.maximum(ss_within, 0.0)
