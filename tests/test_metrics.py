"""avg@k, best@k and worst@k estimators on hand-computed cases."""

import pickle
from fractions import Fraction
from math import comb

import numpy as np
import pytest

from isobook.tasks.metrics import Metric, avg_at_k, best_at_k, worst_at_k


def test_estimators_on_hand_computed_cases() -> None:
    correct = np.array([0, 1, 2, 4])
    assert avg_at_k(correct, 4).tolist() == [0.0, 0.25, 0.5, 1.0]
    # n = 4, k = 2: best = 1 - C(4-c, 2)/6, worst = C(c, 2)/6
    assert best_at_k(correct, 4, 2) == pytest.approx([0.0, 0.5, 5 / 6, 1.0])
    assert worst_at_k(correct, 4, 2) == pytest.approx([0.0, 0.0, 1 / 6, 1.0])


def test_k_equal_n_is_any_and_all() -> None:
    correct = np.array([0, 3, 16])
    assert best_at_k(correct, 16, 16).tolist() == [0.0, 1.0, 1.0]
    assert worst_at_k(correct, 16, 16).tolist() == [0.0, 0.0, 1.0]


def test_k_out_of_range_is_refused() -> None:
    with pytest.raises(ValueError, match="k: must lie in"):
        best_at_k(np.array([1]), 4, 5)


@pytest.mark.parametrize("k", [1, 64, 512, 2048])
def test_large_n_and_k_match_exact_fractions(k: int) -> None:
    # C(2048, 512) ~ 1e490: a quotient of binomials in floats is inf / inf here.
    n = 2048
    correct = np.array([0, 1, 2, 100, 511, 512, 1024, 1536, 2046, 2047, 2048])
    exact_best = [1 - Fraction(comb(n - c, k), comb(n, k)) for c in correct]
    exact_worst = [Fraction(comb(c, k), comb(n, k)) for c in correct]
    best, worst = best_at_k(correct, n, k), worst_at_k(correct, n, k)
    assert np.isfinite(best).all() and np.isfinite(worst).all()
    assert np.abs(best - np.array(exact_best, dtype=float)).max() < 1e-12
    assert np.abs(worst - np.array(exact_worst, dtype=float)).max() < 1e-12
    assert best[0] == 0.0 and best[-1] == 1.0 and worst[-1] == 1.0 and (worst[correct < k] == 0.0).all()


def test_counts_out_of_range_are_refused() -> None:
    with pytest.raises(ValueError, match="correct: counts must lie in"):
        worst_at_k(np.array([0, 5]), 4, 2)


def test_a_metric_is_its_store_column_and_carries_its_values() -> None:
    correct = np.array([0, 1, 3, 4])
    best = Metric("best", 2)
    assert best == "val_best@2" and (best.kind, best.k) == ("best", 2)
    assert best.per_problem(correct, 4).tolist() == best_at_k(correct, 4, 2).tolist()
    assert Metric("avg", 2).per_problem(correct, 4).tolist() == [0.0, 0.25, 0.75, 1.0]
    assert Metric("worst", 2).per_problem(correct, 4).tolist() == worst_at_k(correct, 4, 2).tolist()
    copy = pickle.loads(pickle.dumps(best))
    assert (copy, copy.kind, copy.k) == ("val_best@2", "best", 2) and type(str(best)) is str
    with pytest.raises(ValueError, match="kind: 'mean'; allowed: avg, best, worst"):
        Metric("mean", 2)
