"""Published per-item results as models (adapter `published`, issue 49): a results file its authors publish for a
model they ran (RewardBench's `eval-set-scores/<model>.json`, ...), or the score files of an earlier rmeval run,
read instead of running the model, aligned to this run's items by the benchmark's own id.

`entry.py` (a registry entry's source: github, hub, local, run; the pinned download and its cache), `reader.py`
(`PublishedReader`: the seam a benchmark's catalogue names in `published_reader`; `PublishedScores`), `earlier.py`
(an earlier run's score files and lock), `align.py` (matched, missing and extra items; the 90 % rule), `plan.py`
(parse-time checks and the preflight check of each published model), `listing.py` (`rmeval published`).
The shared layer names no benchmark: each benchmark's reader lives in its own package.
"""
