"""The WMT metrics-task protocol: the WMT statistics with segment resampling, their permutation tests, and tie
calibration (acc23)."""
