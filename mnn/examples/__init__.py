"""Runnable examples: ``python -m mnn.examples.train_digits``."""
