"""Charts render offline to SVG that shows the data they were given."""

import re

import numpy as np
import pandas as pd
import vl_convert

from isobook.analysis.fits import sigmoid
from isobook.analysis.frontier import fit_curves, fit_optimal, frontier
from isobook.book.charts import curves_chart, frontier_chart, gap_chart, histogram_chart, n_star_chart, optimal_chart

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


def test_compute_axes_tick_at_powers_of_two_and_legends_sort_numerically_with_formatted_values() -> None:
    data = points()
    data = data[(data["rollouts"] >= 600) & (data["rollouts"] <= 5000)]  # 724 to 4,096: ticks 512 ... 4,096
    data = data.assign(lr=data["n"].map({2: 0.1 * 3e-3, 8: 1e-4, 32: 3e-3}))  # 0.1 * 3e-3 = 0.00030000000000000003
    drawn = svg(curves_chart(data, "val_avg@4", color="lr"))
    ticks = [">512<", ">1,024<", ">2,048<", ">4,096<"]
    assert all(tick in drawn for tick in ticks) and ">600<" not in drawn and ">1,500<" not in drawn
    legend = [label for label in (">0.0001<", ">0.0003<", ">0.003<") if label in drawn]
    assert legend == [">0.0001<", ">0.0003<", ">0.003<"] and "0.00030000000000000003" not in drawn
    assert drawn.index(">0.0001<") < drawn.index(">0.0003<") < drawn.index(">0.003<")  # numeric, not text, order
    width = float(drawn.split('width="', 1)[1].split('"', 1)[0])
    assert width <= 400  # one panel with its legend: two side by side fit the page column


def test_n_star_chart_draws_each_policy_with_log2_n_ticks_and_one_solid_legend() -> None:
    optima = pd.DataFrame({"rollouts": [1024, 4096, 1024, 4096], "n": [2, 2, 2, 16],
                           "within noise": [(2,), (2, 4), (2, 4), (8, 16)],
                           "policy": ["tabular", "tabular", "d = 16", "d = 16"]})
    drawn = svg(n_star_chart(optima, "policy", title="n* by budget"))
    assert "n* by budget" in drawn and "n within noise" in drawn
    assert all(f">{tick}<" in drawn for tick in (2, 4, 8, 16))  # the band's range sets the ticks
    assert drawn.count(">tabular<") == 1 and drawn.count(">d = 16<") == 1  # one legend, not one per layer
    # lines that coincide stay visible: the second policy's line is dashed over the first's
    assert set(re.findall(r'stroke-dasharray="([^"]+)"', drawn)) - {"1,0"}


def test_the_gap_chart_dashes_training_reward_and_legends_both_with_drawn_symbols() -> None:
    data = points().rename(columns={"val_avg@4": "reward"}).assign(**{"val_avg@4": lambda d: d["reward"] + 0.05})
    drawn = svg(gap_chart(data, "val_avg@4", title="training and validation"))
    assert "training and validation" in drawn and ">n<" in drawn and ">measured on<" in drawn
    assert drawn.count(">validation (val_avg@4)<") == 1 and drawn.count(">training batches<") == 1
    dashes = set(re.findall(r'stroke-dasharray="([^"]+)"', drawn))
    assert dashes - {"1,0"}  # a real dash pattern (Vega writes 1,0 for solid lines): the training lines and symbol
    assert drawn.count('role="graphics-symbol"') >= 6  # three n, two lines each
