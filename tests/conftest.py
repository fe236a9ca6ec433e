import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


@pytest.fixture(scope="session")
def device():
    from app.device import create_device

    return create_device(os.environ.get("VISUAL_TRAINER_TEST_DEVICE", "auto"))


@pytest.fixture
def make_trainer(device):
    from app.config import Config, validate
    from app.trainer import Trainer

    def make(**fields):
        return Trainer(device, validate(Config(**fields)))

    return make
