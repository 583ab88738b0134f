"""The fairness benchmark's part of `results/lock.yaml`: the `arxiv` and `groups` sections (papers with versions
and row hashes, each group table's hash), and the rebuild of the locked groups (`arxiv.source: lock`, command
`rmeval arxiv-from-lock`) from the arXiv API's `id_list` or a snapshot."""
