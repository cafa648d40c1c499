"""Entry point of the frozen dpdesk (PyInstaller, build_scripts/dpdesk.spec).

* ``dpdesk --selftest``: run :func:`dpdesk.selftest.run` (a release of the bundled sample in a
  temporary dpdesk home) and exit with its status;
* ``dpdesk FILE`` where FILE is an existing plan or table (what a desktop entry's ``Exec=dpdesk %f``,
  or dropping a file on the program, passes): the same as ``dpdesk open FILE``;
* anything else: :func:`dpdesk.cli.main`, which opens the desktop app without arguments and runs
  subcommands otherwise.
"""

import os
import sys

OPENABLE = (".json", ".csv", ".tsv", ".txt", ".xlsx", ".xlsm", ".parquet", ".pq")


def _main() -> int:
    if "--selftest" in sys.argv[1:]:
        import dpdesk.selftest

        return dpdesk.selftest.run()
    args = sys.argv[1:]
    if len(args) == 1 and args[0].lower().endswith(OPENABLE) and os.path.isfile(args[0]):
        sys.argv[1:1] = ["open"]
    import dpdesk.cli

    return dpdesk.cli.main()


if __name__ == "__main__":
    sys.exit(_main())
