"""The engines below `timekit ab` and over any result sets: compare (a CI gate), shell commands and
cmdrun's protocol, the sequential looks and planning, calibration, history (changepoints). What
uses ab is analysis.products."""
