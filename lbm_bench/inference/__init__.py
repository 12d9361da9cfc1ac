"""Inference with the true parameters: the block-sum engine, the alternating MAP
classifier (Algorithm 1) and the blockwise Gibbs sampler (Proposition 2)."""

from lbm_bench.inference.classifier import MapResult, map_labels
from lbm_bench.inference.gibbs import GibbsSamples, RiskEstimate, gibbs_labels

__all__ = ["GibbsSamples", "MapResult", "RiskEstimate", "gibbs_labels", "map_labels"]
