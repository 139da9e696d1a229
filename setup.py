"""Build hook: the embedded sample goes into the wheel as package data.

The sample is written once, in ``goldsets/`` (``sample.yaml`` and the documents under ``sample/``);
``build_py`` copies it to ``rulegauge/data/sample/`` inside the build, so ``pip install`` of the
wheel gives ``rulegauge run`` its sample (:mod:`rulegauge.pipeline.sample`). Everything else is
declared in ``pyproject.toml``; ``MANIFEST.in`` puts ``goldsets/sample*`` into the sdist.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
SAMPLE = (ROOT / "goldsets" / "sample.yaml", ROOT / "goldsets" / "sample")


class BuildPyWithSample(build_py):
    """``build_py`` plus the sample under ``rulegauge/data/sample/``."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:  # an editable install reads goldsets/ where it is
            return
        target = Path(self.build_lib) / "rulegauge" / "data" / "sample"
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        goldset, documents = SAMPLE
        shutil.copy2(goldset, target / goldset.name)
        shutil.copytree(documents, target / documents.name)


setup(cmdclass={"build_py": BuildPyWithSample})
