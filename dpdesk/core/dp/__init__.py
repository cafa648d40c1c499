"""Differential privacy: the OpenDP adapter (the only module that draws release noise), accounting and
composition, the statistics registry and its statistics, their noise designs and accuracy, the typed released
values, the synthesiser."""
