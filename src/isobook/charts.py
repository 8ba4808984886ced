"""The book's charts, built with Altair from the analysis tables.

Charts render as static SVG (`use_offline_renderer`): Altair's default renderer loads Vega
from a CDN and shows nothing offline, while SVG made locally by vl-convert displays the
same in JupyterLab, in an executed notebook and in the built book, with no network.
Compute axes are log2 rollouts, the unit the paper's fits use.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from isobook.fits import SigmoidFit


def use_offline_renderer() -> None:
    """Render every chart of this session as inline SVG (no JavaScript, no CDN)."""
    alt.renderers.enable("svg")


def curves_chart(points: pd.DataFrame, metric: str, color: str = "n", title: str = "") -> alt.Chart:
    """Validation `metric` versus rollouts, one line per value of `color` (evaluation points
    with rollouts > 0; the x axis is logarithmic)."""
    data = points[points["rollouts"] > 0]
    return alt.Chart(data, title=title).mark_line(point=True).encode(
        x=alt.X("rollouts:Q", scale=alt.Scale(type="log", base=2), title="rollouts (C)"),
        y=alt.Y(f"{metric}:Q", title=metric),
        color=alt.Color(f"{color}:O", title=color, scale=alt.Scale(scheme="viridis")),
    )


def frontier_chart(fits: dict[tuple, SigmoidFit], edge: pd.DataFrame, metric: str, key: str = "n",
                   title: str = "") -> alt.LayerChart:
    """Fitted curves (thin, one per `key` value) under the compute-optimal frontier, whose
    points are coloured by the `key` value attaining it (n*)."""
    rows = []
    for curve, fit in fits.items():
        for x in np.linspace(fit.x_min, fit.x_max, 40):
            rows.append({"curve": str(curve), "rollouts": 2.0 ** x, metric: float(fit(x))})
    fitted = alt.Chart(pd.DataFrame(rows)).mark_line(opacity=0.35).encode(
        x=alt.X("rollouts:Q", scale=alt.Scale(type="log", base=2), title="rollouts (C)"),
        y=alt.Y(f"{metric}:Q", title=metric),
        detail="curve:N",
    )
    envelope = alt.Chart(edge.rename(columns={"reward": metric})).mark_circle(size=60).encode(
        x="rollouts:Q", y=f"{metric}:Q",
        color=alt.Color(f"{key}:O", title=f"{key}*", scale=alt.Scale(scheme="viridis")),
    )
    return alt.layer(fitted, envelope, title=title)


def optimal_chart(edge: pd.DataFrame, fit: SigmoidFit, key: str = "n", title: str = "") -> alt.LayerChart:
    """log2 of the frontier's `key` (n*) versus rollouts, with its fitted sigmoid."""
    x = np.linspace(fit.x_min, fit.x_max, 60)
    curve = pd.DataFrame({"rollouts": 2.0 ** x, f"log2 {key}*": fit(x)})
    measured = edge.assign(**{f"log2 {key}*": np.log2(edge[key].astype(float))})
    axis = alt.X("rollouts:Q", scale=alt.Scale(type="log", base=2), title="rollouts (C)")
    return alt.layer(
        alt.Chart(measured).mark_circle(size=50).encode(x=axis, y=f"log2 {key}*:Q"),
        alt.Chart(curve).mark_line(color="firebrick").encode(x=axis, y=f"log2 {key}*:Q"),
        title=title,
    )


def histogram_chart(table: pd.DataFrame, value: str, count: str, title: str = "") -> alt.Chart:
    """Bars of `count` per `value` (e.g. problems per avg@16, or per pass@1)."""
    return alt.Chart(table, title=title).mark_bar().encode(
        x=alt.X(f"{value}:O", title=value), y=alt.Y(f"{count}:Q", title=count),
    )


def panels(charts: list[alt.TopLevelMixin], columns: int = 2) -> alt.ConcatChart:
    """Several charts as one figure, `columns` per row, each keeping its own colour scale."""
    return alt.concat(*charts, columns=columns).resolve_scale(color="independent")


def pass_chart(train_pass: pd.DataFrame, title: str = "") -> alt.FacetChart:
    """Histograms of training problems' pass@1, one panel per (n, rollouts): rows are n,
    columns the measurement points (paper Figure 12)."""
    data = train_pass[["n", "rollouts", "pass_at_1"]]
    return alt.Chart(data).mark_bar().encode(
        x=alt.X("pass_at_1:Q", bin=alt.Bin(extent=[0, 1], step=0.125), title="pass@1"),
        y=alt.Y("count():Q", title="problems"),
    ).properties(width=140, height=90).facet(row="n:O", column="rollouts:O", title=title)
