"""Inference with the true parameters: the block-sum engine, the alternating MAP
classifier (Algorithm 1), the blockwise Gibbs sampler (Proposition 2) and the Bayes
rule for l_item with its cross-fitted conditional risk (the certified floor)."""

from lbm_bench.inference.bayes import bayes_labels
from lbm_bench.inference.classifier import MapResult, map_labels
from lbm_bench.inference.floor import FloorCertificate, floor_certificate
from lbm_bench.inference.gibbs import GibbsSamples, RiskEstimate, gibbs_labels

__all__ = [
    "FloorCertificate",
    "GibbsSamples",
    "MapResult",
    "RiskEstimate",
    "bayes_labels",
    "floor_certificate",
    "gibbs_labels",
    "map_labels",
]
