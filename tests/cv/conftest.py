"""Fixtures for the mnn.cv tests (generated images; no files, no network)."""
import cv2
import pytest

from cv_helpers import photo_like


@pytest.fixture(scope="session")
def photo():
    return photo_like(97, 131, 3)


@pytest.fixture(scope="session")
def photo4():
    return photo_like(64, 80, 4, seed=1)


@pytest.fixture(scope="session")
def gray():
    return photo_like(97, 131, 1, seed=2)


@pytest.fixture(autouse=True, scope="session")
def _cv2_threads():
    cv2.setNumThreads(1)
    yield
