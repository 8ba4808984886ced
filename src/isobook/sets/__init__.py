"""Difficulty sets: each problem's pass rate under the base model, the rules that cut the
pool into easy / hard / ... sets, and building them (alone or as parallel arms)."""
