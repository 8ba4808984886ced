"""Per-problem pass metrics from n samples with c correct (paper section 2).

Each function takes correct counts `c` (one per problem) out of `n` samples and returns
the unbiased estimate per problem; average over problems for the set-level metric.
``avg@k`` is c/n for any k <= n; ``best@k`` (pass@k, coverage) is the chance that k of
the n samples drawn without replacement hold at least one correct; ``worst@k``
(sharpening) the chance that all k are correct.
"""

from __future__ import annotations

import numpy as np
from scipy.special import comb


def avg_at_k(correct: np.ndarray, n: int) -> np.ndarray:
    """Mean pass rate per problem. # [problems]"""
    return np.asarray(correct, dtype=float) / n


def best_at_k(correct: np.ndarray, n: int, k: int) -> np.ndarray:
    """Unbiased pass@k per problem: ``1 - C(n-c, k) / C(n, k)``. # [problems]"""
    _check(n, k)
    c = np.asarray(correct)
    return 1.0 - comb(n - c, k, exact=False) / comb(n, k, exact=False)


def worst_at_k(correct: np.ndarray, n: int, k: int) -> np.ndarray:
    """Unbiased all-k-correct rate per problem: ``C(c, k) / C(n, k)``. # [problems]"""
    _check(n, k)
    c = np.asarray(correct)
    return comb(c, k, exact=False) / comb(n, k, exact=False)


def _check(n: int, k: int) -> None:
    if not 1 <= k <= n:
        raise ValueError(f"k: must lie in [1, n={n}], got {k}")
