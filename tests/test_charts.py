"""Charts render offline to SVG that shows the data they were given."""

import numpy as np
import pandas as pd
import vl_convert

from isobook.charts import curves_chart, frontier_chart, histogram_chart, optimal_chart
from isobook.fits import sigmoid
from isobook.frontier import fit_curves, fit_optimal, frontier

X = np.arange(6.0, 16.01, 0.5)


def points() -> pd.DataFrame:
    return pd.DataFrame([{"n": n, "rollouts": 2.0 ** x, "val_avg@4": float(sigmoid(x, 0.1, 0.5 + 0.05 * n.bit_length(),
                                                                                      7 + n.bit_length(), 1.5))}
                         for n in (2, 8, 32) for x in X])


def svg(chart) -> str:
    return vl_convert.vegalite_to_svg(chart.to_json())


def test_curve_and_frontier_charts_render_with_their_titles_and_legends() -> None:
    data = points()
    fits = fit_curves(data, by=["n"], metric="val_avg@4")
    edge = frontier(fits, X, by=["n"])
    curves = svg(curves_chart(data, "val_avg@4", title="reward vs compute"))
    assert curves.startswith("<svg") and "reward vs compute" in curves and "rollouts (C)" in curves
    drawn = svg(frontier_chart(fits, edge, "val_avg@4", title="frontier"))
    assert "n*" in drawn and "frontier" in drawn
    assert all(f">{n}<" in drawn for n in sorted(set(edge["n"])))  # each n* in the legend
    optimal = svg(optimal_chart(edge, fit_optimal(edge), title="n star"))
    assert "log2 n*" in optimal


def test_histogram_chart_draws_one_bar_per_value() -> None:
    table = pd.DataFrame({"avg@16": ["0.0000", "0.0625", "0.1250"], "problems": [5, 3, 1]})
    drawn = svg(histogram_chart(table, "avg@16", "problems"))
    assert drawn.count('role="graphics-symbol"') >= 3 and "0.0625" in drawn
