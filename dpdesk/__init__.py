"""dpdesk: publish statistics from a sensitive table under differential privacy.

This module imports nothing heavy so that ``import dpdesk`` stays fast.
"""

__version__ = "0.1.0"
