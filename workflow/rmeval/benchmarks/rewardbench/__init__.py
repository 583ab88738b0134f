"""RewardBench (Lambert et al. 2024) and the code RewardBench 2 (the `rewardbench2` package) shares with it:
loading, preparation, the official scoring rules and the tables. Import-free."""
