"""`timekit plan`: its command line, and the plan of a paired A/B run's directory (the planning
math is analysis.tools.plan)."""
