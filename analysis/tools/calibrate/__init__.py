"""How far compare's verdicts can be trusted here: within one invocation, between invocations, and
the report's claims (the command line is analysis.products.calibrate)."""
