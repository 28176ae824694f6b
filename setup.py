"""The build of the compiled search kernel (everything else is in pyproject.toml).

``pip install -e .`` (or ``pip install .``, or ``python -m build`` for a wheel) cythonizes
``coloretto/bots/_kernel.pyx`` and compiles it with the machine's C compiler, so no bot compiles
anything on first use. The sha256 of the .pyx goes into the module (``_kernel.SOURCE_SHA256``):
``coloretto.bots.kernel`` refuses to run a build older than the source beside it.

A machine without a working C compiler or without Python's headers gets one sentence that says
what to install (:data:`NO_COMPILER`), not the compiler's traceback: a wheel needs neither.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import CCompilerError, ExecError, PlatformError, SetupError

try:
    from Cython.Build import cythonize
except ImportError:  # a build without isolation (pip's build environment installs it)
    raise SystemExit(
        "coloretto's search kernel is written in Cython: install it (pip install 'Cython>=3.0') "
        "or let pip build in its own environment (no --no-build-isolation), or install a wheel"
    ) from None

KERNEL_SOURCE = Path("coloretto/bots/_kernel.pyx")

#: gcc and clang: -O3, and no -march=native, so that the module runs on any machine of the
#: same architecture; no fused multiply-adds, so that a seed gives the same playouts everywhere
UNIX_FLAGS = ["-O3", "-ffp-contract=off"]


#: what a source install says when the kernel cannot be compiled here
NO_COMPILER = (
    "coloretto's search kernel is a C extension: install a C compiler and Python's headers "
    "(Debian/Ubuntu: apt-get install gcc python3-dev; Fedora: dnf install gcc python3-devel; "
    "macOS: xcode-select --install; Windows: the Microsoft C++ Build Tools), "
    "or install a wheel of coloretto made for this platform"
)


class BuildExt(build_ext):
    def run(self) -> None:
        try:
            super().run()
        except (CCompilerError, ExecError, PlatformError) as exc:
            # the compiler's own words are above: this says what to do about them
            raise SetupError(NO_COMPILER) from exc

    def build_extensions(self) -> None:
        if self.compiler.compiler_type == "unix":
            for extension in self.extensions:
                extension.extra_compile_args = [*extension.extra_compile_args, *UNIX_FLAGS]
        super().build_extensions()


kernel = Extension(
    "coloretto.bots._kernel",
    [str(KERNEL_SOURCE)],
    define_macros=[
        ("COLORETTO_KERNEL_SOURCE_SHA256", f'"{hashlib.sha256(KERNEL_SOURCE.read_bytes()).hexdigest()}"')
    ],
)

setup(
    ext_modules=cythonize([kernel], compiler_directives={"language_level": "3"}),
    cmdclass={"build_ext": BuildExt},
)
