"""Fixtures of the storage tests: one seeded table of every family, and its file."""

from __future__ import annotations

from pathlib import Path

import pytest

from lbm_bench.protocol.table import Table
from lbm_bench.storage import save_table
from tests.storage.tables import FAMILIES, MISSING_FAMILIES, SPARSE_FAMILIES, make_table


@pytest.fixture(scope="module")
def tables() -> dict[str, Table]:
    return {
        name: make_table(kind, effects=effects, floor=floor) for name, (kind, effects, floor) in FAMILIES.items()
    }


@pytest.fixture(scope="module")
def files(tables: dict[str, Table], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("tables")
    return {name: save_table(table, folder / f"{name}.h5") for name, table in tables.items()}


@pytest.fixture(scope="module")
def sparse_tables() -> dict[str, Table]:
    return {name: make_table(kind, effects=effects, sparse=True) for name, (kind, effects) in SPARSE_FAMILIES.items()}


@pytest.fixture(scope="module")
def sparse_files(sparse_tables: dict[str, Table], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("sparse-tables")
    return {name: save_table(table, folder / f"{name}.h5") for name, table in sparse_tables.items()}


@pytest.fixture(scope="module")
def missing_tables() -> dict[str, Table]:
    return {name: make_table(kind, effects=effects, sparse=sparse, missing=(rate, mechanism))
            for name, (kind, effects, sparse, rate, mechanism) in MISSING_FAMILIES.items()}


@pytest.fixture(scope="module")
def missing_files(missing_tables: dict[str, Table], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("missing-tables")
    return {name: save_table(table, folder / f"{name}.h5") for name, table in missing_tables.items()}
