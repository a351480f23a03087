"""Builds the Python package `proflint` (python/proflint + the extension module proflint._core).

The extension is built by CMake (PROFLINT_PYTHON=ON, python/CMakeLists.txt) in the folder
PROFLINT_PYTHON_BUILD_DIR (default build-python/), whose configuration is reused when it exists;
nothing is downloaded. See docs/python.md for the install and test commands.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def cli_version():
    """The CLI's version: CMake's project(proflint VERSION x.y.z)."""
    text = (ROOT / "CMakeLists.txt").read_text(encoding="utf-8")
    return re.search(r"project\(proflint VERSION ([0-9.]+)", text).group(1)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = Path(os.environ.get("PROFLINT_PYTHON_BUILD_DIR", ROOT / "build-python")).resolve()
        configure = ["cmake", "-S", str(ROOT), "-B", str(build_dir), "-DPROFLINT_PYTHON=ON",
                     f"-DPython3_EXECUTABLE={sys.executable}"]
        if not (build_dir / "CMakeCache.txt").exists():
            configure += ["-DCMAKE_BUILD_TYPE=Release", "-DPROFLINT_TESTS=OFF", "-DPROFLINT_BENCH=OFF"]
            if shutil.which("ninja"):
                configure += ["-G", "Ninja"]
        subprocess.check_call(configure)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
        subprocess.check_call(["cmake", "--build", str(build_dir), "--target", "proflint_python", "-j", jobs])
        built = next((build_dir / "python" / "proflint").glob("_core*.so"))
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


setup(
    name="proflint",
    version=cli_version(),
    description="Expert system for GPU deep-learning profiles (Kineto JSON, Nsight Systems SQLite): ranked findings, "
                "SQL over the profile, a regression gate and a torch.profiler handler",
    long_description=(ROOT / "docs" / "python.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    python_requires=">=3.9",
    packages=["proflint"],
    package_dir={"": "python"},
    package_data={"proflint": ["py.typed", "_core.pyi"]},
    ext_modules=[Extension("proflint._core", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    install_requires=["pandas"],
    extras_require={"torch": ["torch"]},
    options={"build": {"build_base": str(Path("build-python") / "setuptools")}},
    zip_safe=False,
)
