"""Outputs: the plan file and what is read from it.

In: a plan. Out: the plan file (state to commit), how each placement is served (container,
environment, weights, isolation), the terminal tables and ``--explain``, the changes since
the last plan, charts, and the LP lower bound on any plan's cost.
"""
