"""`timekit plan`: how many benchexec invocations and runs a comparison needs, from a pilot."""
