"""avg@k, best@k and worst@k estimators on hand-computed cases."""

import numpy as np
import pytest

from isobook.metrics import avg_at_k, best_at_k, worst_at_k


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
