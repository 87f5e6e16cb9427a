"""Micro-benchmarks: one piece of mockserver measured in a process of its own, no load client."""
