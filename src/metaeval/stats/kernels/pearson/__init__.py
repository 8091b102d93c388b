"""Pearson's kernels: the all-pairs permutation kernels (item-grouped, by-system) and the power simulation's."""
