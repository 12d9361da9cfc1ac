"""A table prepared for block EM: its sufficient statistics, its products with assignments, the
M-step.

:class:`EMProblem` reads the table once (sufficient statistics, base measure;
Gaussian tables centred; dense, or CSR for the families that ``can_be_sparse``) and
offers the only block sums that read it, its two products with assignments
:meth:`EMProblem.row_sums` (``T_p @ W``) and :meth:`EMProblem.col_sums`
(``T_p^T @ Z``); every other block sum of block CEM and VEM
(:mod:`lbm_bench.algorithms.lbm_em`) and of the model selection
(:mod:`lbm_bench.algorithms.selection`) is computed from these small
(items x clusters) arrays.

**Missing entries** (NaN, a masked array, explicit NaN of a sparse table): the
statistics are zeroed at missing entries and the observed mask ``M`` is one more
channel of the products, so that ``n_l`` becomes the row's observed count
``(M @ W)_il`` in the row step and the block sizes of the M-step the blocks'
observed counts ``Z^T M W`` (a sparse table: ``M @ W = 1 @ W - Missing @ W``, its
missing set being sparse). The starts' k-means++ seeding sees the table with its
missing entries imputed by column means (:meth:`EMProblem.seed_points`; categorical
tables: the one-hot codes of the observed entries).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from lbm_bench.algorithms.inputs import imputed_table
from lbm_bench.models.base import LatentBlockModel
from lbm_bench.models.checks import refuse_sparse
from lbm_bench.models.data import DenseTableData, SparseTableData, TableData
from lbm_bench.models.family import Family
from lbm_bench.models.registry import sparse_family_names

__all__ = ["EMProblem", "MIN_MASS", "VARIANCE_FLOOR", "block_logits", "col_totals", "one_hot_codes",
           "proportions", "row_totals"]

#: Gaussian block variances are floored at this fraction of the table variance.
VARIANCE_FLOOR = 1e-6
#: A VEM cluster whose posterior mass falls below this is "empty": its block
#: parameters are kept from the previous M-step and its proportion is floored.
MIN_MASS = 1e-8
#: Floor of estimated proportions (before renormalisation).
MIN_PROPORTION = 1e-12


def proportions(mass: np.ndarray) -> np.ndarray:
    """Cluster proportions from their masses (g,), floored at ``MIN_PROPORTION`` and
    renormalised."""
    props = np.maximum(mass / mass.sum(), MIN_PROPORTION)
    return props / props.sum()


class EMProblem:
    """A validated table, its sufficient statistics and the family's M-step.

    Shapes: ``T`` is (p, n_rows, n_cols); row assignments ``Z`` are (n_rows, g)
    and column assignments ``W`` are (n_cols, m), one-hot (CEM) or soft (VEM).

    Parameters
    ----------
    X : ndarray, scipy.sparse array or TableData
        The table (a :class:`~lbm_bench.models.data.TableData` carries its missing entries).
    family : Family
        The family fitted.
    method : str, default="cem"
        The method, for messages.
    """

    def __init__(self, X: np.ndarray | sp.csr_array | TableData, family: Family,
                 method: str = "cem") -> None:
        kind = family.kind
        self.kind = kind
        self.family = family
        data = TableData.of(X)
        self.data = data
        self.sparse = data.is_sparse
        if not family.model.can_be_sparse:
            refuse_sparse(data, f"{method} with {kind} blocks", remedy="densify it (X.toarray()) "
                                                                       f"to fit {kind} blocks",
                          reason="it fits a sparse table with "
                                 f"{' or '.join(sparse_family_names())} blocks only")
        placeholder = family.estimation.placeholder(data.table)
        self._placeholder = placeholder
        self._row_base: np.ndarray | None = None
        self._col_base: np.ndarray | None = None
        self._seed_points: tuple | None = None
        #: whether the observed mask is a channel of the products (missing entries)
        self.masked = data.has_missing and data.n_missing > 0
        self.p = placeholder.n_stats
        if self.sparse:
            self._init_sparse(data, method)
            return
        self.X = placeholder.check_table(data.table)
        if self.masked:
            self._init_masked(data.observed)
            return
        # Gaussian tables are fitted centred (block variances E[x^2] - E[x]^2
        # lose precision far from zero); restore() shifts the means back.
        self.offset = float(np.mean(self.X)) if family.estimation.fit_centred else 0.0
        self.values = np.asarray(self.X, dtype=np.float64) - self.offset
        self.T = placeholder.sufficient_statistics(self.values)
        self.T_t = np.ascontiguousarray(self.T.swapaxes(1, 2))
        self.base_measure = placeholder.log_base_measure(self.values)
        table_var = float(np.var(self.X)) if family.estimation.fit_centred else 0.0
        self.var_floor = VARIANCE_FLOOR * table_var if table_var > 0 else 1e-12
        self.prior_var = table_var  # the pseudo-entry of every block variance (estimate_blocks)
        self.seed_values = self.values

    def _init_masked(self, observed: np.ndarray) -> None:
        """A dense table with missing entries: statistics zeroed there, the mask as channel
        ``p``."""
        values = np.asarray(self.X, dtype=np.float64)
        seen = values[observed]
        self.offset = float(
            seen.mean()) if self.family.estimation.fit_centred and seen.size else 0.0
        self.values = np.where(observed, values - self.offset, 0.0)
        stats = self._placeholder.sufficient_statistics(self.values) * observed
        self.T = np.concatenate([stats, observed[None].astype(np.float64)])
        self.T_t = np.ascontiguousarray(self.T.swapaxes(1, 2))
        self.base_measure = self._placeholder.log_base_measure(
            self.values) - self.data.n_missing * self._zero_base()
        table_var = float(np.var(seen)) if self.family.estimation.fit_centred and seen.size else 0.0
        self.var_floor = VARIANCE_FLOOR * table_var if table_var > 0 else 1e-12
        self.prior_var = table_var
        self.seed_values = imputed_table(DenseTableData(self.values, observed))

    def _zero_base(self) -> float:
        """``log h(0)`` of one entry (the families' does not depend on the exposure)."""
        return float(
            self._placeholder.log_base_measure(np.zeros((1, 1),
                                                        dtype=self.family.model.table_dtype)))

    def _init_sparse(self, data: TableData, method: str) -> None:
        """A sparse table: its one statistic ``T(x) = x`` in CSR and its transpose (and its
        missing set, whose products give the observed counts).

        Only families whose statistic is the entry itself and whose base measure
        vanishes at zero (``can_be_sparse``: Bernoulli, Poisson; the others are refused
        by the constructor) keep the table sparse: every block sum is then a sparse
        product and the zeros add nothing to the base measure. The family's table check
        refuses values its tables cannot hold.
        """
        table = self._placeholder.check_table(data.table)
        self.X = table
        self.offset = 0.0
        self.values = sp.csr_array(table, dtype=np.float64)
        self.values.sum_duplicates()
        self.T = [self.values]
        self.T_t = [sp.csr_array(self.values.T)]
        if self.masked:
            self.missing = data.missing_indicator()
            self.missing_t = sp.csr_array(self.missing.T)
        base = self._placeholder.log_base_measure
        self.base_measure = float(base(self.values.data[None])) if self.values.nnz else 0.0
        self.var_floor, self.prior_var = 1e-12, 0.0
        self.seed_values = imputed_table(SparseTableData(
            self.values, data.missing)) if self.masked else self.values

    def _base_by_item(self, table: np.ndarray | sp.csr_array) -> np.ndarray:
        """``sum_j log h(x_ij)`` of every row of ``table`` (zeros add nothing when sparse)."""
        base = self._placeholder.log_base_measure
        if not self.sparse:
            return np.array([base(row[None]) for row in table])
        data, indptr = table.data, table.indptr
        return np.array([
            base(data[None, a:b]) if b > a else 0.0
            for a, b in zip(indptr[:-1], indptr[1:], strict=True)
        ])

    def row_base(self) -> np.ndarray:
        """Per-row base measure ``sum_j M_ij log h(x_ij)`` (n_rows,), computed on demand."""
        if self._row_base is None:
            self._row_base = self._base_by_item(self.values)
            if self.masked and not self.sparse:
                self._row_base -= self.data.missing_row_counts() * self._zero_base()
        return self._row_base

    def col_base(self) -> np.ndarray:
        """Per-column base measure (n_cols,), computed on demand."""
        if self._col_base is None:
            self._col_base = self._base_by_item(self.T_t[0] if self.sparse else self.values.T)
            if self.masked and not self.sparse:
                self._col_base -= self.data.missing_col_counts() * self._zero_base()
        return self._col_base

    def seed_points(self) -> tuple[np.ndarray | sp.csr_array, np.ndarray | sp.csr_array]:
        """The points k-means++ seeds the starts on: the rows (n_rows, .) and the columns
        (n_cols, .) of the table (missing entries imputed by column means), or, for a family
        whose statistics are the indicators of a code (``code_statistics``: categorical
        blocks), of its one-hot encoding (CSR, one non-zero per observed entry: distances
        count the differing codes, whatever their values)."""
        if self._seed_points is None:
            if self.family.model.code_statistics:
                codes = np.asarray(self.X, dtype=np.int64)
                observed = self.data.observed if self.masked else None
                observed_t = None if observed is None else observed.T
                self._seed_points = (one_hot_codes(codes,
                                                   observed), one_hot_codes(codes.T, observed_t))
            elif self.sparse:
                columns = sp.csr_array(self.seed_values.T) if self.masked else self.T_t[0]
                self._seed_points = (self.seed_values, columns)
            else:
                self._seed_points = (self.seed_values, self.seed_values.T)
        return self._seed_points

    def restore(self, model: LatentBlockModel) -> LatentBlockModel:
        """The model of the original table from one fitted to the centred table."""
        if self.offset == 0.0:
            return model
        params = model.block_parameters()
        means = params["means"] + self.offset
        return self.family.model(model.row_proportions, model.col_proportions, means,
                                 params["stds"])

    # The table's products with assignments: the only block sums that read the table.
    def row_sums(self, W: np.ndarray) -> np.ndarray:
        """Row block sums ``T_p @ W``: (p, n_rows, m) (and the observed counts ``M @ W`` last,
        with missing entries)."""
        sums = [t @ W for t in self.T]
        if self.masked and self.sparse:
            sums.append(W.sum(0)[None, :] - self.missing @ W)
        return np.stack(sums)

    def col_sums(self, Z: np.ndarray) -> np.ndarray:
        """Column block sums ``T_p^T @ Z``: (p, n_cols, g) (and ``M^T @ Z`` last)."""
        sums = [t @ Z for t in self.T_t]
        if self.masked and self.sparse:
            sums.append(Z.sum(0)[None, :] - self.missing_t @ Z)
        return np.stack(sums)

    def block_totals(self, Z: np.ndarray, W: np.ndarray) -> np.ndarray:
        """Block sums of the sufficient statistics ``Z^T T_p W``: (p, g, m) (and the blocks'
        observed counts ``Z^T M W`` last, with missing entries)."""
        return row_totals(Z, self.row_sums(W))

    def exposure(self, Z: np.ndarray, W: np.ndarray, totals: np.ndarray) -> np.ndarray:
        """Block sizes (g, m): the observed counts with missing entries."""
        if self.masked:
            return totals[self.p]
        return np.outer(Z.sum(0), W.sum(0))

    def row_step(self, model: LatentBlockModel, W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Row block sums and unnormalised ``log p(z_i = k | W, x_i)``.

        Returns ``S = T @ W`` of shape (p, n_rows, m) and the logits (n_rows, g);
        for soft ``W`` the logits are the mean-field update of the row posteriors.
        """
        S = self.row_sums(W)
        eta, log_partition = model.natural_parameters, model.log_partition
        mass = S[self.p] if self.masked else W.sum(0)
        return S, block_logits(S[: self.p], mass, eta, log_partition, model.row_proportions)

    def col_step(self, model: LatentBlockModel, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Column block sums ``T^T @ Z`` (p, n_cols, g) and logits (n_cols, m)."""
        S = self.col_sums(Z)
        eta, log_partition = model.natural_parameters.swapaxes(1, 2), model.log_partition.T
        mass = S[self.p] if self.masked else Z.sum(0)
        return S, block_logits(S[: self.p], mass, eta, log_partition, model.col_proportions)

    def m_step(
        self,
        Z: np.ndarray,
        W: np.ndarray,
        totals: np.ndarray,
        previous: LatentBlockModel | None,
    ) -> LatentBlockModel:
        """The model maximising the expected complete log-likelihood given Z and W.

        ``totals`` are the block sums ``Z^T T_p W`` (p, g, m). Blocks of a cluster
        whose mass is below ``MIN_MASS`` keep the parameters of ``previous``
        (only VEM clusters empty out: CEM re-seeds them; with missing entries, also a
        block with no observed entry).
        """
        row_mass, col_mass = Z.sum(0), W.sum(0)
        exposure = np.maximum(self.exposure(Z, W, totals), MIN_MASS)
        params = self.family.estimation.estimate_blocks(totals[:self.p], exposure, self.var_floor,
                                                        self.prior_var)
        stale = (row_mass < MIN_MASS)[:, None] | (col_mass < MIN_MASS)[None, :]
        if self.masked:
            stale = stale | (exposure <= MIN_MASS)
        if previous is not None and stale.any():
            for name, old in previous.block_parameters().items():
                # (g, m) + block_extents
                where = stale.reshape(stale.shape + (1,) * (np.ndim(old) - 2))
                params[name] = np.where(where, old, params[name])
        return self.family.model(proportions(row_mass), proportions(col_mass), **params)

    def expected_log_joint(
        self, model: LatentBlockModel, Z: np.ndarray, W: np.ndarray, totals: np.ndarray
    ) -> float:
        """``E_{Z, W}[log p(X, z, w)]``: the complete log-likelihood for one-hot Z and W
        (of the observed entries)."""
        row_mass, col_mass = Z.sum(0), W.sum(0)
        value = np.sum(model.natural_parameters * totals[: self.p])
        value -= np.sum(model.log_partition * self.exposure(Z, W, totals))
        value += row_mass @ np.log(model.row_proportions) + col_mass @ np.log(model.col_proportions)
        return float(value + self.base_measure)


def one_hot_codes(codes: np.ndarray, observed: np.ndarray | None = None) -> sp.csr_array:
    """Rows of a table of codes one-hot encoded: (n_rows, n_cols * n_codes), one 1 per
    (observed) entry."""
    n, d = codes.shape
    width = int(codes.max()) + 1
    columns = np.arange(d) * width + codes
    if observed is None:
        return sp.csr_array((np.ones(n * d), columns.ravel(), np.arange(0, n * d + 1, d)),
                            shape=(n, d * width))
    indptr = np.concatenate([[0], np.cumsum(observed.sum(1))])
    return sp.csr_array((np.ones(int(indptr[-1])), columns[observed], indptr), shape=(n, d * width))


def block_logits(
    S: np.ndarray, mass: np.ndarray, eta: np.ndarray, log_partition: np.ndarray, props: np.ndarray
) -> np.ndarray:
    """``log props_k + sum_o [eta_ko . S_io - A_ko mass_o]``.

    S is (p, n, o), mass (o,) or, with missing entries, each item's own (n, o), eta
    (p, k, o), log_partition (k, o); returns (n, k).
    """
    logits = np.log(props) - (log_partition @ mass if mass.ndim == 1 else mass @ log_partition.T)
    for s, e in zip(S, eta, strict=True):
        logits = logits + s @ e.T
    return logits


def row_totals(Z: np.ndarray, S: np.ndarray) -> np.ndarray:
    """``Z^T S_p`` for row block sums S (p, n, m): (p, g, m)."""
    return np.stack([Z.T @ s for s in S])


def col_totals(S: np.ndarray, W: np.ndarray) -> np.ndarray:
    """``S_p^T W`` for column block sums S (p, d, g): (p, g, m)."""
    return np.stack([s.T @ W for s in S])
