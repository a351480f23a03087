"""Helpers for scripts/gen_profile.py: a deterministic synthetic GPU training-profile generator.

Modules: hw (GPU specs), kernels (kernel-name catalog), model (layer graph, costs), sim (timeline
simulation producing abstract records), kineto (PyTorch profiler JSON writers), nsys (Nsight Systems
2026.2 SQLite export writer).
"""
