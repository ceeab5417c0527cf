"""Build the compiled core. Metadata lives in pyproject.toml; this file only lists the
extension and the Cython directives (set CONSISTENT_HASH_DEBUG_CYTHON=1 for bounds checks)."""

import os

from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG = os.environ.get("CONSISTENT_HASH_DEBUG_CYTHON") == "1"
directives = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": False,
    "initializedcheck": DEBUG,
    "cdivision": True,
    "embedsignature": True,
    "freethreading_compatible": True,
}
# MSVC: the conforming preprocessor, which src/ch_hashes.h's table needs (__VA_ARGS__ passed on)
extra = ["-O0", "-g"] if DEBUG else (["/O2", "/Zc:preprocessor"] if os.name == "nt" else ["-O3"])
if os.environ.get("CONSISTENT_HASH_SANITIZE"):
    extra += ["-fsanitize=" + os.environ["CONSISTENT_HASH_SANITIZE"], "-fno-omit-frame-pointer",
              "-fno-sanitize-recover=all"]  # any report aborts the run

setup(
    ext_modules=cythonize(
        [
            Extension(
                "consistent_hash._ring",
                ["src/_ring.pyx"],
                include_dirs=["src"],
                extra_compile_args=extra,
                extra_link_args=[a for a in extra if a.startswith("-fsanitize")],
            )
        ],
        compiler_directives=directives,
        annotate=DEBUG,
    )
)
