"""`tipcgen bench` and `tipcgen report`: seed 004's benchmark matrix run for real, one JSON
record per run, seed 003's speed-up table with plots, and seed 004's convergence check.

matrix (spec -> runs and their per-node commands) -> execute (run, watch, bound) -> parse (the
logs) -> records (one JSON per run) -> report / plots; converge judges one run's curve.
"""
