"""Evaluation: compile the sympy equations once per model structure, evaluate them over numpy arrays."""
