"""RMB (Zhou et al., ICLR 2025): pairwise and best-of-N accuracy of reward models over 49 scenarios of helpfulness
and harmlessness, from the authors' `RMB_dataset` folder."""
