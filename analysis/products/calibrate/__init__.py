"""`timekit calibrate`: its command line, and the calibration of a paired A/B run's directory (the
calibration math is analysis.tools.calibrate)."""
