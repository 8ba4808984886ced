"""The book's verdicts: one pure function per claim of the paper, with the uncertainty that decided it.

Each claim function takes tables a chapter already has (per-problem counts from
`sweeps.run_counts` or `transfer.transfer_counts`, a run's logged updates, bandit curves)
and returns a `Finding`: the paper's claim, our numbers, a `Verdict` and the interval
that decided it. Chapters only display findings; no verdict is decided in ``book/``.

    seed_variance.py  the pooled seed variance (`SeedVariance`) and how much weight it gets
                      beside a contrast's own (the guard for contrasts that differ from it)
    statistics.py     per-(seed, problem) scores, contrasts and their intervals over problems
                      and training seeds, optima within noise, Welch intervals on block means
                      of logged updates (how uncertainty is measured)
    verdicts.py       `Verdict`, `Finding`, the margins and the rules from intervals to a
                      verdict and its p-value
    claims.py         the claims about LLM runs, each decided by one contrast (best cell, n*
                      grows, which optimum lies at larger n, spread, B_p matters little, ...)
    bandit_claims.py  the bandit's n* by budget and its claim that the smallest n wins
    multiplicity.py   Holm's control of the error rate over a build's LLM findings

Chapters import from the submodule that holds a function (``from isobook.analysis.findings.claims
import n_star_grows``).
"""
