"""Standalone tools over any result sets: compare (a CI gate), history (changepoints), calibration."""
