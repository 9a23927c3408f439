import os

import pytest


def pytest_collection_modifyitems(config, items):
    try:
        import ax  # noqa: F401
    except ImportError as e:
        if "ax" in os.environ.get("TORCHX_REQUIRE_ENGINES", "").split(","):
            raise RuntimeError(f"ax-platform is required (TORCHX_REQUIRE_ENGINES) but cannot be imported: {e}") from e
        skip = pytest.mark.skip(reason="ax-platform not installed (scripts/install-deps.sh installs it)")
        for item in items:
            item.add_marker(skip)


def booth(x1: float, x2: float) -> float:
    return (x1 + 2 * x2 - 7) ** 2 + (2 * x1 + x2 - 5) ** 2
