"""Products that use `timekit ab` (analysis.ab): bisect, and the paired halves of plan and
calibrate with their command lines. The engines they and ab share (compare, shell commands, the
sequential looks, the planning and calibration math) are analysis.tools, below ab."""
