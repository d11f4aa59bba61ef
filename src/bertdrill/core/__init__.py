"""The pure core: lessons, formulas, numbers, grading, diagnosis, cards, stats and the schedulers.

No files, clock, terminal, randomness or database: time, seeds and paths are arguments.
"""
