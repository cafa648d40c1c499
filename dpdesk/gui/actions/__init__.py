"""The app's flows as actions: one small class per flow, or per family of closely related flows.

An action asks what it needs through the window's dialogs (``window.ask_*``, which tests answer), runs its service
as a job in the worker (:meth:`dpdesk.gui.main_window.MainWindow.run_job`: progress and cancel in the status bar,
an engine error shown in words) and handles the result on the GUI thread. The window lays out the views, owns the
menus and wires actions to them; its methods of the same names (``release``, ``open_data``, ``review``, ...) only
delegate here.

- :mod:`.opening`: open what a path is, a table, the bundled sample;
- :mod:`.plan_file`: open, save and import into the plan;
- :mod:`.release`: the release in two steps (prepare, confirm, commit);
- :mod:`.simulations`: uncharged simulated releases and a synthetic table's fidelity;
- :mod:`.results`: the release package, the synthetic tables, the budget statement;
- :mod:`.review`: a package or an exported ledger, read-only;
- :mod:`.approvals`: the privacy officer's approval of a plan, and attaching one to the next release;
- :mod:`.near_copy`: a table that resembles a known dataset, linked to it or declared new.

Modules here import the engine and the services inside their functions, so that start-up does not grow.
"""
