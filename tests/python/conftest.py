"""Fixtures of the Python tests: the checkout, ../shared (tests that need it skip, saying
so, when it is absent) and the meshsim command (ctest passes MESHSIM_BIN)."""
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def repo():
    return REPO


@pytest.fixture
def shared():
    folder = REPO.parent / "shared"
    if not (folder / "traces").is_dir():
        pytest.skip(f"{folder} is absent: the public traces are not on this machine")
    return folder


@pytest.fixture
def meshsim_bin():
    path = os.environ.get("MESHSIM_BIN", str(REPO / "build" / "tools" / "meshsim"))
    if not Path(path).is_file():
        pytest.skip(f"{path}: the meshsim command is not built (ctest sets MESHSIM_BIN)")
    return path
