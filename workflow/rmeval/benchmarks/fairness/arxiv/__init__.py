"""arXiv acquisition: category table and aliases, snapshot streaming, the API source, sampling, manifests.

Stage 1 of the workflow. `rmeval arxiv-fetch` (cli_fetch) collects one group's single-group candidates from a
Kaggle/OAI snapshot or the live API; `rmeval arxiv-select` (cli_select) drops titles shared between groups and
writes the balanced, seeded sample of every group with its manifest.
"""
