"""The book's charts, built with Altair from the analysis tables.

Charts render as static SVG (`use_offline_renderer`): Altair's default renderer loads Vega
from a CDN and shows nothing offline, while SVG made locally by vl-convert displays the
same in JupyterLab, in an executed notebook and in the built book, with no network.

Conventions a reader relies on: compute axes are log2 rollouts ticked at powers of two
(``512``, ``1,024``, ...); categories (n, B_p, a recipe) get a categorical palette with
legend entries in numeric order and numbers formatted (``0.0003``, not
``0.00030000000000000003``); a chart is `WIDTH` pixels wide so that two side by side fit
the book's page column.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from isobook.analysis.fits import SigmoidFit

WIDTH, HEIGHT = 250, 170  # pixels of one panel; two panels and their legends fit a 720-pixel column
PALETTE = "tableau10"


def use_offline_renderer() -> None:
    """Render every chart of this session as inline SVG (no JavaScript, no CDN)."""
    alt.renderers.enable("svg")


def compute_axis(rollouts: Sequence[float], title: str = "rollouts (C)") -> alt.X:
    """A log2 x axis over `rollouts` (all > 0) ticked at the powers of two it spans."""
    values = np.asarray(rollouts, dtype=float)
    low, high = math.floor(math.log2(values.min())), math.ceil(math.log2(values.max()))
    high = max(high, low + 1)  # one power of two alone would be a domain of zero width
    ticks = [2**e for e in range(low, high + 1)]
    return alt.X("rollouts:Q", title=title, scale=alt.Scale(type="log", base=2, domain=[2**low, 2**high]),
                 axis=alt.Axis(values=ticks, format=",", labelAngle=0 if len(ticks) <= 6 else -45))


def category_labels(values: pd.Series) -> tuple[pd.Series, list[str]]:
    """`values` as legend labels (numbers formatted with ``:g``) and the labels in
    numeric (or first-seen) order."""
    if pd.api.types.is_numeric_dtype(values):
        labels = values.map(lambda v: f"{v:g}")
        order = [f"{v:g}" for v in sorted(values.unique())]
    else:
        labels = values.astype(str)
        order = list(dict.fromkeys(labels))
    return labels, order


def category_color(field: str, order: list[str], title: str) -> alt.Color:
    """A categorical colour encoding of `field` with its legend in `order`."""
    return alt.Color(f"{field}:N", title=title, sort=order, scale=alt.Scale(scheme=PALETTE, domain=order))


def curves_chart(points: pd.DataFrame, metric: str, color: str = "n", title: str = "") -> alt.Chart:
    """Validation `metric` versus rollouts, one line per value of `color` (evaluation points
    with rollouts > 0)."""
    data = points[points["rollouts"] > 0].copy()
    data["label"], order = category_labels(data[color])
    return alt.Chart(data, title=title).mark_line(point=True).encode(
        x=compute_axis(data["rollouts"]),
        y=alt.Y(f"{metric}:Q", title=metric, scale=alt.Scale(zero=False)),
        color=category_color("label", order, color),
    ).properties(width=WIDTH, height=HEIGHT)


def rate_chart(curves: pd.DataFrame, metric: str, title: str = "") -> alt.Chart:
    """Validation `metric` against the peak learning rate (log2 axis), one line per n, for
    one budget: the tuning behind a learning-rate envelope. `curves`: columns ``n``,
    ``lr`` and ``score`` (`envelope.Envelope.curves` at one budget)."""
    data = curves.sort_values(["n", "lr"]).copy()
    data["label"], order = category_labels(data["n"])
    return alt.Chart(data, title=title).mark_line(point=True).encode(
        x=alt.X("lr:Q", title="peak learning rate", scale=alt.Scale(type="log", base=2),
                axis=alt.Axis(format=".1e", labelAngle=-45)),
        y=alt.Y("score:Q", title=metric, scale=alt.Scale(zero=False)),
        color=category_color("label", order, "n"),
    ).properties(width=WIDTH, height=HEIGHT)


def gap_chart(rewards: pd.DataFrame, metric: str, title: str = "") -> alt.LayerChart:
    """Training reward (dashed) and validation `metric` (solid) versus rollouts, one colour
    per n (paper Figure 13). `rewards`: columns ``n``, ``rollouts``, ``reward`` (the
    training batches', `frontier.training_rewards`) and `metric`."""
    kinds = {metric: f"validation ({metric})", "reward": "training batches"}
    data = rewards.melt(id_vars=["n", "rollouts"], value_vars=list(kinds), var_name="kind", value_name="value")
    data["measured on"] = data["kind"].map(kinds)
    data["label"], order = category_labels(data["n"])
    base = alt.Chart(data).encode(x=compute_axis(data["rollouts"]),
                                  y=alt.Y("value:Q", title="reward", scale=alt.Scale(zero=False)),
                                  color=category_color("label", order, "n"))
    # The dashes on a layer of their own: a line mark with points draws no legend symbol for them.
    dash = alt.StrokeDash("measured on:N", title="measured on", sort=list(kinds.values()),
                          legend=alt.Legend(symbolType="stroke", symbolStrokeColor="gray"))
    return alt.layer(base.mark_line().encode(strokeDash=dash), base.mark_point(filled=True, size=20),
                     title=title).properties(width=WIDTH, height=HEIGHT)


def frontier_chart(fits: dict[tuple, SigmoidFit], edge: pd.DataFrame, metric: str, key: str = "n",
                   title: str | list[str] = "") -> alt.LayerChart:
    """Fitted curves (thin, one per `key` value) under the compute-optimal frontier, whose
    points are coloured by the `key` value attaining it (n*)."""
    rows = [{"curve": str(curve), "rollouts": 2.0**x, metric: float(fit(x))}
            for curve, fit in fits.items() for x in np.linspace(fit.x_min, fit.x_max, 40)]
    curves = pd.DataFrame(rows)
    axis = compute_axis(pd.concat([curves["rollouts"], edge["rollouts"]]))
    fitted = alt.Chart(curves).mark_line(opacity=0.35, color="gray").encode(
        x=axis, y=alt.Y(f"{metric}:Q", title=metric, scale=alt.Scale(zero=False)), detail="curve:N")
    points = edge.rename(columns={"reward": metric}).copy()
    points["label"], order = category_labels(points[key])
    envelope = alt.Chart(points).mark_circle(size=60, opacity=1).encode(
        x=axis, y=f"{metric}:Q", color=category_color("label", order, f"{key}*"))
    return alt.layer(fitted, envelope, title=title).properties(width=WIDTH, height=HEIGHT)


def optimal_chart(edge: pd.DataFrame, fit: SigmoidFit, key: str = "n", title: str | list[str] = "") -> alt.LayerChart:
    """log2 of the frontier's `key` (n*) versus rollouts, with its fitted sigmoid."""
    x = np.linspace(fit.x_min, fit.x_max, 60)
    curve = pd.DataFrame({"rollouts": 2.0**x, f"log2 {key}*": fit(x)})
    measured = edge.assign(**{f"log2 {key}*": np.log2(edge[key].astype(float))})
    axis = compute_axis(pd.concat([curve["rollouts"], measured["rollouts"]]))
    return alt.layer(
        alt.Chart(measured).mark_circle(size=50).encode(x=axis, y=f"log2 {key}*:Q"),
        alt.Chart(curve).mark_line(color="firebrick").encode(x=axis, y=f"log2 {key}*:Q"),
        title=title,
    ).properties(width=WIDTH, height=HEIGHT)


def n_star_chart(optima: pd.DataFrame, color: str, title: str | list[str] = "") -> alt.LayerChart:
    """n* (log2 axis) versus rollouts, one line per value of `color`, over a band from the
    smallest to the largest n within noise of n* at each budget. `optima`: columns
    ``rollouts``, ``n``, ``within noise`` (`findings.bandit_claims.bandit_optima` rows) and `color`.
    Each line has its own dash pattern and point size, so lines that coincide (the same
    n* at every budget) still show every colour."""
    data = optima[["rollouts", "n", color]].assign(low=optima["within noise"].map(min),
                                                    high=optima["within noise"].map(max))
    data["label"], order = category_labels(data[color])
    exponents = range(int(math.log2(data["low"].min())), int(math.log2(data["high"].max())) + 1)
    scale, axis = alt.Scale(type="log", base=2), alt.Axis(values=[2**e for e in exponents], format="d")
    title_y = "n* (band: n within noise)"
    solid = category_color("label", order, color).legend(symbolOpacity=1)  # legend symbols as the lines, not the bands
    base = alt.Chart(data).encode(x=compute_axis(data["rollouts"]), color=solid)
    band = base.mark_area(opacity=0.12).encode(y=alt.Y("low:Q", title=title_y, scale=scale, axis=axis), y2="high:Q")
    y = alt.Y("n:Q", title=title_y, scale=scale, axis=axis)
    line = base.mark_line().encode(y=y, strokeDash=alt.StrokeDash("label:N", sort=order, legend=None))
    sizes = np.linspace(110, 30, len(order)).tolist()  # later points smaller: a point beneath shows as a ring
    points = base.mark_point(filled=True, opacity=1).encode(
        y=y, size=alt.Size("label:N", sort=order, scale=alt.Scale(domain=order, range=sizes), legend=None))
    return alt.layer(band, line, points, title=title).properties(width=2 * WIDTH, height=HEIGHT)


def histogram_chart(table: pd.DataFrame, value: str, count: str, title: str = "") -> alt.Chart:
    """Bars of `count` per `value` (e.g. problems per avg@16, or per pass@1)."""
    return alt.Chart(table, title=title).mark_bar().encode(
        x=alt.X(f"{value}:O", title=value), y=alt.Y(f"{count}:Q", title=count),
    ).properties(width=2 * WIDTH, height=HEIGHT)


def panels(charts: list[alt.TopLevelMixin], columns: int = 2, shared_legend: bool = False) -> alt.ConcatChart:
    """Several charts as one figure, `columns` per row, each keeping its own colour scale
    (or, with `shared_legend`, one legend for charts colouring the same categories)."""
    return alt.concat(*charts, columns=columns).resolve_scale(color="shared" if shared_legend else "independent")


def pass_chart(train_pass: pd.DataFrame, title: str = "") -> alt.FacetChart:
    """Histograms of training problems' pass@1, one panel per (n, rollouts): rows are n,
    columns the measurement points (paper Figure 12)."""
    data = train_pass[["n", "rollouts", "pass_at_1"]]
    chart = alt.Chart(data).mark_bar().encode(
        x=alt.X("pass_at_1:Q", bin=alt.Bin(extent=[0, 1], step=0.125), title="pass@1"),
        y=alt.Y("count():Q", title="problems"),
    )
    points = max(data["rollouts"].nunique(), 1)  # the facet columns share two panels' width
    return chart.properties(width=max(80, 2 * WIDTH // points - 30), height=90).facet(
        row=alt.Row("n:O", title="n"), column=alt.Column("rollouts:O", title="rollouts", header=alt.Header(format=",")),
        title=title)
