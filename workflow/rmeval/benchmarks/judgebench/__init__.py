"""JudgeBench (Tan et al., ICLR 2025; ScalerLab/JudgeBench): response pairs on knowledge, reasoning, math and coding
questions, judged in both orders and scored by the official `utils/metrics.py` rule."""
