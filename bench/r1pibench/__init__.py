"""Shared pieces of the bench/ scripts: statistics, the environment record, running r1pi and
r1pi-bench, reports and gnuplot plots. Python's standard library only (Debian's python3)."""
