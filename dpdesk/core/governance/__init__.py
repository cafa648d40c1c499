"""Privacy officers: their keys, signed approvals and policies."""
