import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


@pytest.fixture(scope="session")
def gpu():
    from app.gpu import create_gpu

    return create_gpu(os.environ.get("VISUAL_TRAINER_TEST_DEVICE", "auto"))


@pytest.fixture(scope="session")
def device(gpu):
    return gpu.device


@pytest.fixture
def make_trainer(gpu):
    from app.config import Config, validate
    from app.trainer import Trainer

    def make(**fields):
        return Trainer(gpu, validate(Config(**fields)))

    return make


@pytest.fixture
def make_session(gpu):
    """A session as the window runs it: the window's grid, heatmaps drawn."""
    from app.config import Config, validate
    from app.session import Session

    def make(**fields):
        return Session(gpu, validate(Config(**fields)), grid=64, heatmaps=True)

    return make
