"""Monotone sigmoids in log compute, the paper's curve family (its record-breaking fits, Figures 5-6).

``y(x) = low + span / (1 + exp(-slope * (x - midpoint)))`` with ``span >= 0`` and
``slope >= 0``, so a fit can only rise: reward versus log2 rollouts for one n, and
log2 n* versus log2 rollouts for the frontier. Fits use SciPy's bounded least squares
from a few starting midpoints (the loss has flat regions when the data show only one
side of the sigmoid) and keep the best.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import curve_fit


def sigmoid(x: np.ndarray, low: float, span: float, midpoint: float, slope: float) -> np.ndarray:
    """The curve family above, evaluated at `x`."""
    return low + span / (1.0 + np.exp(-slope * (np.asarray(x, dtype=float) - midpoint)))


@dataclass(frozen=True)
class SigmoidFit:
    """A fitted monotone sigmoid and the x range of the data it was fitted on."""

    low: float
    span: float
    midpoint: float  # x at half the rise
    slope: float  # per unit of x
    x_min: float
    x_max: float
    rmse: float  # root mean square residual on the fitted points

    @property
    def high(self) -> float:
        """The plateau the curve saturates at."""
        return self.low + self.span

    def __call__(self, x: np.ndarray | float) -> np.ndarray:
        return sigmoid(x, self.low, self.span, self.midpoint, self.slope)


def fit_sigmoid(x: np.ndarray, y: np.ndarray, max_slope: float = 20.0) -> SigmoidFit:
    """The least-squares monotone sigmoid through points (`x`, `y`), at least 2 of them.

    Bounds: the curve starts within the data's range below its lowest point and rises by
    at most twice the data's range; its midpoint lies within one data width of the data.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 2 or len(x) != len(y):
        raise ValueError(f"fit_sigmoid: needs at least 2 paired points, got {len(x)} x and {len(y)} y")
    x_lo, x_hi = float(x.min()), float(x.max())
    width = max(x_hi - x_lo, 1e-9)
    y_lo, y_hi = float(y.min()), float(y.max())
    y_range = max(y_hi - y_lo, 1e-6)
    lower = [y_lo - y_range, 0.0, x_lo - width, 0.0]
    upper = [y_hi, 2.0 * y_range, x_hi + width, max_slope]
    best: tuple[float, np.ndarray] | None = None
    for start in np.linspace(x_lo, x_hi, 5):
        guess = [y_lo, y_range, start, 4.0 / width]
        guess = np.clip(guess, lower, upper)
        try:
            params, _ = curve_fit(sigmoid, x, y, p0=guess, bounds=(lower, upper), maxfev=20000)
        except RuntimeError:  # no convergence from this start
            continue
        error = float(np.sqrt(np.mean((sigmoid(x, *params) - y) ** 2)))
        if best is None or error < best[0]:
            best = (error, params)
    if best is None:
        raise RuntimeError("fit_sigmoid: least squares did not converge from any start")
    error, (low, span, midpoint, slope) = best
    return SigmoidFit(float(low), float(span), float(midpoint), float(slope), x_lo, x_hi, error)
