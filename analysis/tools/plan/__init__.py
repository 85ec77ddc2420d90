"""How many benchexec invocations and runs a comparison needs, and when a sequential rule stops
(the command line is analysis.products.plan)."""
