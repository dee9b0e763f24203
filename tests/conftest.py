"""The hooks of the harness's own tests; what they share beyond hooks and fixtures is in ``tests/support/``."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files marked slow first, in their own order: make test runs the files two at a time (pytest-xdist,
    ``--dist loadfile``), and a long file left for last keeps one process busy while the other has nothing to do."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
