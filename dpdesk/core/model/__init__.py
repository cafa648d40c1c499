"""The declared plan's values (columns, queries, budget, unit of privacy, accounting) and the mechanism kinds:
what is public about a table, below everything that reads tables or draws noise."""
