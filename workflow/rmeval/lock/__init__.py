"""`results/lock.yaml`: exactly what a run used (each benchmark's locked data through its section provider, model
commits, software), and models pinned to a followed lock's commits. Names no benchmark (rmeval.lock.section)."""
