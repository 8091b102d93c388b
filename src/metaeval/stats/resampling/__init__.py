"""Resampling: the bootstrap and permutation draws (generated once, shared by every metric pair) and the
bootstrap confidence intervals built on them; the partition-averaged correlation of random cells
(Dorr et al. 2005)."""
