"""The budget ledger of a dataset: typed entries and the hash chain, checkpoints, corrections and re-costing, the
budget report and the fit, carry-over of a broken ledger, the register of heads, the content identities a home
keeps, and the governance recorded in a chain."""
