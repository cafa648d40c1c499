"""PyInstaller hook for OpenDP (pyinstaller-hooks-contrib has none).

OpenDP loads its Rust library with ctypes from ``opendp/lib/`` (``opendp.abi3.so`` / ``opendp.pyd`` /
``*.dylib``), so PyInstaller's import analysis does not see it, and ``collect_dynamic_libs``' default
patterns (``lib*.so``, ``*.dll``, ``*.dylib``) miss its name. Exactly one file whose name contains
``opendp`` must end up in ``opendp/lib/``: the loader refuses a directory with several.
See shared notes/opendp-and-accounting.md §1.8.
"""

from PyInstaller.utils.hooks import collect_dynamic_libs

binaries = collect_dynamic_libs("opendp", search_patterns=["*.so", "*.pyd", "*.dll", "*.dylib"])
