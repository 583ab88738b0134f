"""The vLLM engine (`engine: vllm` in a registry entry): a `vllm serve` per model, in its own environment.

- `environment.py` where that environment lives and `rmeval engine install vllm`, which builds it;
- `process.py` starting one server (a free port, readiness within a stated timeout, stopping it and its children);
- `http.py` one request to its /classify endpoint: token ids in, raw logits out;
- `scorer.py` `VllmScorer`, a RewardScorer whose ids are the transformers adapter's and whose forward passes run in
  the server, so the engine's batching, checkpoints, deduplication, model server and Slurm paths stay the same.
"""
