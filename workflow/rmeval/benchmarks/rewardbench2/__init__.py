"""RewardBench 2 (Malik et al. 2025): its catalogue, config section and planner; the loading, official scoring
rules and tables are the `rewardbench` package's. Import-free."""
