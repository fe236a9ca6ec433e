"""The package list, found rather than kept by hand (pyproject.toml has everything else):
every package under app/, a folder with an __init__.py, installed as slang_visual_trainer.<path>
(pyproject.toml's package-dir maps the name to app/), and the data folders shaders/ and assets/."""

from setuptools import find_packages, setup

APP_PACKAGES = ["slang_visual_trainer" + name[len("app") :] for name in find_packages(include=["app", "app.*"])]
DATA_PACKAGES = ["slang_visual_trainer.shaders", "slang_visual_trainer.assets", "slang_visual_trainer.assets.presets"]

setup(packages=APP_PACKAGES + DATA_PACKAGES)
