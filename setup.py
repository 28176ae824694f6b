"""The build of the compiled search kernel (everything else is in pyproject.toml).

``pip install -e .`` (or ``pip install .``) cythonizes ``coloretto/bots/_kernel.pyx`` and
compiles it with the machine's C compiler, so no bot compiles anything on first use. The sha256
of the .pyx goes into the module (``_kernel.SOURCE_SHA256``): ``coloretto.bots.kernel`` refuses
to run a build older than the source beside it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

KERNEL_SOURCE = Path("coloretto/bots/_kernel.pyx")

#: gcc and clang: -O3, and no -march=native, so that the module runs on any machine of the
#: same architecture; no fused multiply-adds, so that a seed gives the same playouts everywhere
UNIX_FLAGS = ["-O3", "-ffp-contract=off"]


class BuildExt(build_ext):
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
