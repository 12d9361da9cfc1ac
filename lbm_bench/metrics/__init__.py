"""Comparison of partitions and of co-clusterings, and the conditional risk.

Every measure is computed from contingency tables. Label vectors may use any
integer values (negative ones included): two label vectors describe the same
partition when they differ by a relabelling. The two compared partitions may
have different numbers of clusters.

Partition comparison (:mod:`lbm_bench.metrics.partition`)
    :func:`contingency`, :func:`rand`, :func:`ari`, :func:`nmi`, :func:`ami`,
    :func:`matching_error`, :func:`normalized_accuracy`,
    :func:`adjusted_asymmetric_accuracy` and :func:`pair_sets_index` take two
    label vectors ``(a, b)``, or a single contingency table ``a`` (rows: the
    reference clusters) with ``b=None``, like genieclust.

Co-clustering comparison (:mod:`lbm_bench.metrics.coclustering`)
    :func:`l_row`, :func:`l_col`, :func:`l_item` (equal to :func:`ce` with
    ``match=True``), :func:`l_full` and :func:`cari` compare a reference
    co-clustering ``(z, w)`` with a predicted one ``(z_pred, w_pred)``.

Batches of reference label sets
    :func:`ari`, :func:`rand`, :func:`l_row`, :func:`l_col`, :func:`l_item`,
    :func:`l_full`, :func:`ce` and :func:`cari` also accept reference labels of
    shape ``(n_sets, n)`` (for instance Gibbs label sets) and then return one
    value per set; a 1-D reference returns a Python float.

Conditional risk (:mod:`lbm_bench.metrics.risk`)
    :func:`conditional_risk` scores one co-clustering against Gibbs label sets
    under a single label matching and returns a :class:`ConditionalRisk`;
    :func:`item_losses` gives the per-set row and column error rates under the
    identity matching; :func:`chance_risk` (:mod:`lbm_bench.metrics.chance`) the risk of
    labels drawn at random from the proportions.

Pair counts (Rand, ARI, CARI) are exact integers (see
:mod:`lbm_bench.metrics.contingency_tables`), so the final ratio is correctly rounded.
"""

from lbm_bench.metrics.chance import chance_risk
from lbm_bench.metrics.coclustering import cari, ce, l_col, l_full, l_item, l_row
from lbm_bench.metrics.contingency_tables import contingency
from lbm_bench.metrics.partition import (
    adjusted_asymmetric_accuracy,
    ami,
    ari,
    matching_error,
    nmi,
    normalized_accuracy,
    pair_sets_index,
    rand,
)
from lbm_bench.metrics.risk import ConditionalRisk, conditional_risk, item_losses

__all__ = [
    "ConditionalRisk",
    "adjusted_asymmetric_accuracy",
    "ami",
    "ari",
    "cari",
    "ce",
    "chance_risk",
    "conditional_risk",
    "contingency",
    "item_losses",
    "l_col",
    "l_full",
    "l_item",
    "l_row",
    "matching_error",
    "nmi",
    "normalized_accuracy",
    "pair_sets_index",
    "rand",
]
