"""The package version, in the lowest layer so that every room can record it."""

__all__ = ["__version__"]

__version__ = "0.1.0"
