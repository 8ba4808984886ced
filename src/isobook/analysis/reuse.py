"""The data-reuse grid: every n on a small training set, run until each problem has been
drawn many times (chapter 02).

    runs = reuse_runs(config, rates)    # rates: n -> multiplier, e.g. `envelope_rates`
    run_configs(runs, config)
    counts = rate_counts(runs, config)  # then n* as for any grid (`n_star.n_star_table`)

The paper's matched runs reach C/D of several hundred (C rollouts over D training
problems); the sweep's hard grid reaches a few. Here D = ``data_reuse.problems`` (the first
training problems of ``data_reuse.set``, ``train.data_size``) and C = ``data_reuse.budget``.
"""

from __future__ import annotations

from collections.abc import Mapping

from isobook.analysis.envelope import Envelope, at_multiplier
from isobook.config import Config
from isobook.sweeps import grid_run, n_grid


def envelope_rates(envelope: Envelope, budget: float) -> dict[int, float]:
    """Each n's multiplier for runs beyond the envelope: the one with the best mean score
    over seeds and every validation problem at `budget` (or the envelope's largest budget
    below it)."""
    curves = envelope.curves[envelope.curves["rollouts"] <= budget]
    last = curves[curves["rollouts"] == curves["rollouts"].max()]
    return {int(n): float(part.loc[part["score"].idxmax(), "multiplier"]) for n, part in last.groupby("n")}


def reuse_runs(config: Config, rates: Mapping[int, float]) -> list[Config]:
    """Every n of the sweep at its first B_p, at its multiplier in `rates` (1 where absent),
    on the first ``data_reuse.problems`` training problems of ``data_reuse.set``, to
    ``data_reuse.budget`` rollouts, on every confirmatory seed (``primaries.seeds``)."""
    reuse = config.data_reuse
    batch_problems, n_values, _ = n_grid(config)
    return [grid_run(config, reuse.set, batch_problems, n,
                     [*at_multiplier(config, rates.get(n, 1.0)), f"train.data_size={reuse.problems}"],
                     budget=reuse.budget, seed=seed)
            for seed in config.primaries.seeds for n in n_values]
