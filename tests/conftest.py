"""Suite-wide settings: the tests never read or write the user's bucket-table cache."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def _private_table_cache(tmp_path_factory: pytest.TempPathFactory):
    """Point ``POKERBOT_CACHE`` (abstraction.table_cache) at an empty directory for the
    session, so a test behaves as on a fresh machine (and subprocesses inherit it)."""
    old = os.environ.get("POKERBOT_CACHE")
    os.environ["POKERBOT_CACHE"] = str(tmp_path_factory.mktemp("pokerbot-cache"))
    yield
    if old is None:
        os.environ.pop("POKERBOT_CACHE", None)
    else:
        os.environ["POKERBOT_CACHE"] = old
