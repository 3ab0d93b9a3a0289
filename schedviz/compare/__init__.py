"""Comparison runs: one workload under two or more scheduler configurations, side by side."""
