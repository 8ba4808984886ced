"""From stored runs to claims: sigmoid fits, the compute frontier, the planner, the bandits,
the studies of chapter 02 (the learning-rate envelope, the data-reuse grid, n* tables with
their regime) and the findings' statistics and verdicts."""
