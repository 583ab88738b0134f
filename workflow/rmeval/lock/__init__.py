"""`results/lock.yaml`: exactly what a run used (papers with versions, model commits, software), and the
machinery to rerun from someone else's lock (`arxiv.source: lock`, models pinned to the locked commits)."""
