"""From stored runs to claims: sigmoid fits, the compute frontier, the planner, the bandits
and the findings' statistics and verdicts."""
