"""pyplay: a playground for sequence models, NumPy only."""

__version__ = "0.1.0"
