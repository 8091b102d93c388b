"""Significance tests: permutation, paired bootstrap and Williams tests of two metrics, single-correlation
p-values, the all-pairs matrix, multiple-comparison corrections and significance clusters."""
