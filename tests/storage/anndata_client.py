"""The anndata package as a real client of the .h5ad reader, run by an interpreter that has it.

anndata holds pandas below 3, under which mlcroissant reads a release's floats back one ulp
off (tests/release/test_croissant.py), so it lives in its own environment (``.ci/run`` makes
``.ci-anndata-venv``); tests/storage/test_anndata_files.py runs this file there:

``python anndata_client.py write SPEC.json``
    writes the .h5ad file the spec describes with ``AnnData.write_h5ad``: ``X`` from an .npz
    (``dense``, or ``data``/``indices``/``indptr``/``shape`` of a CSR table) as ``layout``
    (``dense``, ``csr``, ``csc``) and ``dtype``, the ``obs`` and ``var`` names, and, when
    asked, a ``raw`` holding other values and ``layers``;
``python anndata_client.py read FILE.h5ad OUT.npz``
    reads a file with ``anndata.read_h5ad`` and saves its ``X`` (dense) and names.
"""

import json
import sys

import anndata
import numpy as np
import pandas as pd
import scipy.sparse as sp


def _table(arrays):
    if "dense" in arrays:
        return arrays["dense"]
    return sp.csr_matrix((arrays["data"], arrays["indices"], arrays["indptr"]), shape=tuple(arrays["shape"]))


def write(spec):
    with np.load(spec["arrays"]) as arrays:
        X = _table(arrays)
    X = X.astype(spec.get("dtype", "float32"))
    layout = spec["layout"]
    if layout == "dense":
        X = X.toarray() if sp.issparse(X) else np.asarray(X)
    else:
        X = sp.csr_matrix(X) if layout == "csr" else sp.csc_matrix(X)
    adata = anndata.AnnData(X=X, obs=pd.DataFrame(index=spec["rows"]), var=pd.DataFrame(index=spec["cols"]))
    if spec.get("layers"):
        adata.layers["scaled"] = X * 2.5
    if spec.get("raw"):
        adata.raw = anndata.AnnData(X=X * 10, obs=adata.obs, var=adata.var)  # other values than X
    adata.write_h5ad(spec["path"])


def read(path, out):
    adata = anndata.read_h5ad(path)
    X = adata.X.toarray() if sp.issparse(adata.X) else np.asarray(adata.X)
    np.savez(out, X=X, rows=np.array(list(adata.obs_names), dtype=str), cols=np.array(list(adata.var_names), dtype=str),
             version=np.array(anndata.__version__))


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(json.loads(open(sys.argv[2]).read()))
    else:
        read(sys.argv[2], sys.argv[3])
