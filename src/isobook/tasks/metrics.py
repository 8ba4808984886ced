"""Per-problem pass metrics from n samples with c correct (paper section 2).

Each function takes correct counts `c` (one per problem) out of `n` samples and returns
the unbiased estimate per problem; average over problems for the set-level metric.
``avg@k`` is c/n for any k <= n; ``best@k`` (pass@k, coverage) is the chance that k of
the n samples drawn without replacement hold at least one correct; ``worst@k``
(sharpening) the chance that all k are correct.

Both draw probabilities are ratios of binomials, ``C(m, k) / C(n, k)``, computed as a
product of factors in [0, 1] (as Codex's pass@k estimator does) rather than as a quotient
of two binomials, which overflows to inf / inf = NaN past C(n, k) ~ 1e308 (n = 2048,
k = 512 is already there).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np


class Metric(str):
    """A set-level validation score: its `kind` (``avg``, ``best``, ``worst``) at `k`, and as
    text the run store's column for it (``val_avg@4``), so it indexes tables directly.

    Built from its values (``Metric("best", 4)``), never parsed back from the text."""

    KINDS: ClassVar[tuple[str, ...]] = ("avg", "best", "worst")
    kind: str
    k: int

    def __new__(cls, kind: str, k: int) -> Metric:
        if kind not in cls.KINDS:
            raise ValueError(f"kind: {kind!r}; allowed: {', '.join(cls.KINDS)}")
        if k < 1:
            raise ValueError(f"k: must be >= 1, got {k}")
        metric = super().__new__(cls, f"val_{kind}@{k}")
        metric.kind, metric.k = kind, k
        return metric

    def __getnewargs__(self) -> tuple[str, int]:  # pickling (a chapter's tables, worker processes)
        return self.kind, self.k

    def per_problem(self, correct: np.ndarray, samples: int) -> np.ndarray:
        """This metric's unbiased estimate per problem from `correct` of `samples`. # [problems]"""
        if self.kind == "avg":
            return avg_at_k(correct, samples)
        return (best_at_k if self.kind == "best" else worst_at_k)(correct, samples, self.k)


def avg_at_k(correct: np.ndarray, n: int) -> np.ndarray:
    """Mean pass rate per problem. # [problems]"""
    return np.asarray(correct, dtype=float) / n


def best_at_k(correct: np.ndarray, n: int, k: int) -> np.ndarray:
    """Unbiased pass@k per problem: ``1 - C(n-c, k) / C(n, k)``. # [problems]"""
    c = _counts(correct, n, k)
    return 1.0 - _all_k_drawn_from(n, k)[n - c]


def worst_at_k(correct: np.ndarray, n: int, k: int) -> np.ndarray:
    """Unbiased all-k-correct rate per problem: ``C(c, k) / C(n, k)``. # [problems]"""
    c = _counts(correct, n, k)
    return _all_k_drawn_from(n, k)[c]


def _all_k_drawn_from(n: int, k: int) -> np.ndarray:
    """``C(m, k) / C(n, k)`` for every m = 0..n: the chance that k of n samples drawn
    without replacement all fall among m given ones. # [n + 1]

    ``C(m, k) / C(n, k) = prod_{i=m+1}^{n} (1 - k/i)``, one reversed cumulative product;
    its relative error stays below n x 2^-53 (2e-13 at n = 2048) down to ~1e-308, where
    it underflows and only its absolute error stays that small. The factor at i = k is
    0, so every m < k gets exactly 0; the factors below it are negative and clipped to 0,
    so that zero is never -0.0."""
    factors = np.clip(1.0 - k / np.arange(1, n + 1), 0.0, None)  # [n], factor of i = 1..n
    return np.append(np.cumprod(factors[::-1])[::-1], 1.0)


def _counts(correct: np.ndarray, n: int, k: int) -> np.ndarray:
    """`correct` as integer indices after checking k and c against n. # [problems]"""
    if not 1 <= k <= n:
        raise ValueError(f"k: must lie in [1, n={n}], got {k}")
    c = np.asarray(correct).astype(int)
    if c.size and (c.min() < 0 or c.max() > n):
        raise ValueError(f"correct: counts must lie in [0, n={n}], got {c.min()} to {c.max()}")
    return c
