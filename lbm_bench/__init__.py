"""lbm-bench: co-clustering benchmark tables with a certified conditional Bayes risk.

Public API
----------
Models
    :class:`GaussianLBM`, :class:`PoissonLBM`, :class:`BernoulliLBM`,
    :class:`CategoricalLBM` (the families, by name in :func:`family_names` and
    :func:`get_family`), :func:`random_design`, :func:`random_model`, :func:`find_symmetry`;
    :class:`TableData` (a table's storage, dense or CSR, and its missing entries).
Inference with the true parameters
    :func:`map_labels` (Algorithm 1, X-only starts), :func:`gibbs_labels`
    (blockwise Gibbs sampler), :func:`bayes_labels` and :func:`floor_certificate`
    (the Bayes rule for l_item and its cross-fitted risk: the floor).
The protocol
    :class:`TableRequest` (what to generate: family and options, shape,
    clusters, target risk, criterion) and :class:`GenerationSettings` (how),
    :func:`calibrate_scale` (step 3), :func:`generate_table` (step 4),
    :class:`Table`, :func:`save_table`, :func:`load_table`.
A user's own table
    :func:`read_user_table` (``.npy``, ``.npz``, ``.mtx``, CSV/TSV, ``.h5ad``, table
    files) into a :class:`UserTable`, with :func:`check_user_values` for a family.
Scoring
    :func:`evaluate`, :mod:`lbm_bench.metrics` (ARI, CARI, l_item, conditional risk...);
    :func:`run_benchmark` (co-clustering algorithms over a release, on one of the benchmark's
    tracks).
Algorithms
    :func:`select_lbm` (the numbers of clusters chosen by ICL) and its :class:`LBMSelection`;
    :func:`fit_design` (a design fitted to a user's table: tables like it at any risk) and its
    :class:`FittedDesign`, design files (:func:`read_design_file`, :class:`DesignFile`);
    the baselines are in :mod:`lbm_bench.algorithms`.
Pictures
    :func:`plot_table` (matplotlib, the ``plots`` extra).
Releases
    :func:`build_release`, :func:`verify_release`, :func:`load_release`,
    :func:`load_release_table`, :func:`fetch_release`.

Examples
--------
>>> import lbm_bench
>>> model = lbm_bench.random_model("gaussian", 2, 2, scale=1.0, rng=0)
>>> X, z, w = model.sample(50, 40, rng=1)
>>> result = lbm_bench.map_labels(model, X, rng=2)
>>> samples = lbm_bench.gibbs_labels(model, X, n_samples=200, rng=3)
>>> 0 <= samples.risk(result.rows, result.cols).risk <= 1
True
"""

from lbm_bench import metrics
from lbm_bench._version import __version__
from lbm_bench.algorithms import LBMSelection, select_lbm
from lbm_bench.fitting import FittedDesign, fit_design
from lbm_bench.inference.bayes import bayes_labels
from lbm_bench.inference.classifier import MapResult, map_labels
from lbm_bench.inference.floor import FloorCertificate, floor_certificate
from lbm_bench.inference.gibbs import GibbsSamples, RiskEstimate, gibbs_labels
from lbm_bench.models import (
    BernoulliLBM,
    CategoricalLBM,
    GaussianLBM,
    LatentBlockModel,
    ModelDesign,
    PoissonLBM,
    TableData,
    family_names,
    find_symmetry,
    get_family,
    model_from_parameters,
    random_design,
    random_model,
)
from lbm_bench.models.design_file import DesignFile, DesignFileError, read_design_file
from lbm_bench.plotting import plot_table
from lbm_bench.protocol.calibration import calibrate_scale
from lbm_bench.protocol.generate import RejectionError, generate_table
from lbm_bench.protocol.request import TableRequest
from lbm_bench.protocol.settings import GenerationSettings, ModelOptions
from lbm_bench.protocol.table import CalibrationResult, RejectionRecord, Table
from lbm_bench.release import (
    build_release,
    fetch_release,
    load_release,
    load_release_table,
    verify_release,
)
from lbm_bench.scoring.benchmark import run_benchmark
from lbm_bench.scoring.evaluate import evaluate
from lbm_bench.scoring.report import Report
from lbm_bench.storage import FormatError, load_table, save_table
from lbm_bench.storage.user_data import (
    UserTable,
    UserTableError,
    check_user_values,
    read_user_table,
)

__all__ = [
    "BernoulliLBM",
    "CalibrationResult",
    "CategoricalLBM",
    "DesignFile",
    "DesignFileError",
    "FittedDesign",
    "FloorCertificate",
    "FormatError",
    "GaussianLBM",
    "GenerationSettings",
    "GibbsSamples",
    "LBMSelection",
    "LatentBlockModel",
    "MapResult",
    "ModelDesign",
    "ModelOptions",
    "PoissonLBM",
    "RejectionError",
    "RejectionRecord",
    "Report",
    "RiskEstimate",
    "Table",
    "TableData",
    "TableRequest",
    "UserTable",
    "UserTableError",
    "bayes_labels",
    "build_release",
    "calibrate_scale",
    "check_user_values",
    "evaluate",
    "family_names",
    "fetch_release",
    "fit_design",
    "find_symmetry",
    "floor_certificate",
    "generate_table",
    "get_family",
    "gibbs_labels",
    "load_release",
    "load_release_table",
    "load_table",
    "map_labels",
    "metrics",
    "model_from_parameters",
    "plot_table",
    "random_design",
    "random_model",
    "read_design_file",
    "read_user_table",
    "run_benchmark",
    "save_table",
    "select_lbm",
    "verify_release",
    "__version__",
]
