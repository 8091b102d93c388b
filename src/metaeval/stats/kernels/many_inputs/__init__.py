"""Bootstrap over many inputs: the chunked summary-level kernels (numpy twin and compiled loops) and the
resampled system sums shared by the calls of one set of draws."""
