"""lbm-bench: co-clustering benchmark tables with a certified conditional Bayes risk."""

__version__ = "0.1.0"
