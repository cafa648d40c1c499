"""PyInstaller hook for dpdesk's registry of statistics (``dpdesk.core.dp.statistics``).

The registry finds its modules at run time (``pkgutil.iter_modules`` over the package, which PyInstaller's
``pyi_rth_pkgutil`` runtime hook supports in the frozen app), so no import names them and PyInstaller's
import analysis would leave them out: collect every submodule, including a statistic added later.
"""

from PyInstaller.utils.hooks import collect_submodules

hiddenimports = collect_submodules("dpdesk.core.dp.statistics")
