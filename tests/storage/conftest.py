"""Fixtures of the storage tests: one seeded table of every family, and its file."""

from __future__ import annotations

from pathlib import Path

import pytest

from lbm_bench.protocol.table import Table
from lbm_bench.storage import save_table
from tests.storage.tables import FAMILIES, make_table


@pytest.fixture(scope="module")
def tables() -> dict[str, Table]:
    return {
        name: make_table(kind, effects=effects, floor=floor) for name, (kind, effects, floor) in FAMILIES.items()
    }


@pytest.fixture(scope="module")
def files(tables: dict[str, Table], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("tables")
    return {name: save_table(table, folder / f"{name}.h5") for name, table in tables.items()}
