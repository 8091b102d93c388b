"""The one source of truth for every default: the API, the CLI and the docs refer to these names."""

LEVEL = "system"
COEFFICIENT = "kendall-b"
RESAMPLING_METHOD = "both"
N_RESAMPLES = 1000
CONFIDENCE_LEVEL = 0.95
ALPHA = 0.05
# Deutsch, Dror & Roth (2021) test H1: rho(X, Z) > rho(Y, Z); a significance matrix reads row > column.
ALTERNATIVE = "greater"
CORRECTION = "holm"
FAMILY = "matrix"
INTERVAL = "percentile"
UNDEFINED = "skip"
SEED = 0
REPORT_LEVELS = ("system", "summary")
REPORT_COEFFICIENTS = ("pearson", "spearman", "kendall-b")
