"""Fixtures of the Python package's tests.

* ``engine``: the module under test, ``alluvium`` and (where installed) ``deltalake``, so
  that one test body checks that the two agree on the compatible subset.
* ``peers``: the peers kit's ``oracle`` module (``$ALLUVIUM_PEERS``, default
  ``../shared/peers`` from the repository root), which reads a table with delta-rs, DuckDB
  and polars and digests its rows; tests that need it skip, loudly, without it.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def have(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def pytest_report_header(config: pytest.Config) -> list[str]:
    mods = ["alluvium", "pyarrow", "deltalake", "duckdb", "polars", "arro3.core"]
    return ["modules: " + ", ".join(f"{m}={'yes' if have(m.split('.')[0]) else 'no'}" for m in mods)]


ENGINES = ["alluvium"] + (["deltalake"] if have("deltalake") else [])


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest):
    """The package under test: ``alluvium`` or ``deltalake``."""
    return importlib.import_module(request.param)


@pytest.fixture
def table_path(tmp_path: Path) -> str:
    return str(tmp_path / "table")


@pytest.fixture(scope="session")
def peers():
    path = Path(os.environ.get("ALLUVIUM_PEERS", ROOT.parent / "shared" / "peers"))
    if not (path / "oracle.py").exists():
        pytest.skip(f"SKIPPED: the peers kit (oracle.py) is not at {path}; set ALLUVIUM_PEERS")
    for m in ("deltalake", "duckdb", "polars", "pyarrow"):
        if not have(m):
            pytest.skip(f"SKIPPED: the peer engine {m} is not installed in this venv")
    sys.path.insert(0, str(path))
    return importlib.import_module("oracle")
