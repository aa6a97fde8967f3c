"""The Chart Complexity Vector (CCV) of a ``sample-astro`` chart, read off the matplotlib figure itself.

DomainCQA scores each chart by a Chart Complexity Vector of 10 binary attributes and samples charts so the
benchmark keeps the domain's complexity distribution. The paper's exact attribute list is not reproduced in
zuhyo; :data:`CCV_ATTRIBUTES` is zuhyo's reading of the idea — ten visual features that make an astronomy
chart harder to read. Each attribute is decided from the drawn :class:`~matplotlib.figure.Figure` (axes, scales,
artists), never typed in by hand, so the vector cannot drift from the picture.
"""

from __future__ import annotations

from collections.abc import Iterable

from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.collections import PathCollection
from matplotlib.container import BarContainer, ErrorbarContainer
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

#: zuhyo's reading of DomainCQA's 10 CCV attributes, in vector order (name, what sets it).
CCV_ATTRIBUTES: tuple[tuple[str, str], ...] = (
    ("multi_panel", "more than one data panel (colour bars and twin axes are not panels)"),
    ("log_axis", "at least one logarithmic axis"),
    ("error_bars", "error bars on some data"),
    ("legend", "a legend box"),
    ("many_series", "more than 3 plotted series in one panel (lines incl. reference lines, marker sets, "
                    "error-bar groups, bar groups; a single highlighted point is not a series)"),
    ("annotations", "text or arrows placed inside a panel (titles and axis labels do not count)"),
    ("dual_axis", "a second x or y axis with its own scale (twinx/twiny or a secondary axis)"),
    ("dense_points", "more than 100 plotted markers in the figure"),
    ("colour_map", "a colour scale: a colour bar, an image/mesh, or markers coloured by a value"),
    ("non_cartesian", "a panel in a non-Cartesian projection (polar, Mollweide, Aitoff, ...)"),
)
CCV_NAMES: tuple[str, ...] = tuple(name for name, _ in CCV_ATTRIBUTES)
DENSE_POINTS = 100
MANY_SERIES = 3


def _is_colorbar(ax: Axes) -> bool:
    # Colorbar sets ``ax._colorbar`` on the axes it draws into; there is no public flag for it.
    return getattr(ax, "_colorbar", None) is not None


def _data_axes(fig: Figure) -> list[Axes]:
    return [ax for ax in fig.axes if not _is_colorbar(ax)]


def _panels(axes: list[Axes]) -> list[Axes]:
    """Data axes with twins (same position as an earlier axes) folded into one panel."""
    panels: list[Axes] = []
    for ax in axes:
        if not any(tuple(ax.get_position().bounds) == tuple(p.get_position().bounds) for p in panels):
            panels.append(ax)
    return panels


def _container_parts(ax: Axes) -> set[Artist]:
    parts: set[Artist] = set()
    for cont in ax.containers:
        for child in cont.get_children():
            parts.add(child)
    return parts


def _series_count(ax: Axes) -> int:
    parts = _container_parts(ax)
    groups = sum(isinstance(c, ErrorbarContainer | BarContainer) for c in ax.containers)
    # A single highlighted point (a labelled reference star, a marked value) is not a series of its own.
    lines = sum(1 for ln in ax.lines if ln not in parts and len(ln.get_xdata()) > 1)
    markers = sum(1 for c in ax.collections if isinstance(c, PathCollection) and c not in parts
                  and len(c.get_offsets()) > 1)
    return groups + lines + markers


def _has_marker(line: Line2D) -> bool:
    return line.get_marker() not in (None, "None", "none", "", " ")


def _marker_count(axes: Iterable[Axes]) -> int:
    n = 0
    for ax in axes:
        # Error-bar caps are Line2D objects with '_'/'|' markers; they are not data points.
        caps = {cap for c in ax.containers if isinstance(c, ErrorbarContainer) for cap in c.lines[1]}
        n += sum(len(ln.get_xdata()) for ln in ax.lines if _has_marker(ln) and ln not in caps)
        n += sum(len(c.get_offsets()) for c in ax.collections if isinstance(c, PathCollection))
    return n


def _has_secondary_axis(ax: Axes) -> bool:
    # secondary_xaxis/secondary_yaxis live in ax.child_axes (inset axes do too, but are not axes of their own scale).
    return any(type(child).__name__ == "SecondaryAxis" for child in ax.child_axes)


def figure_ccv(fig: Figure) -> list[int]:
    """The figure's 10 CCV bits, in :data:`CCV_ATTRIBUTES` order (1 = attribute present)."""
    axes = _data_axes(fig)
    panels = _panels(axes)
    colour = any(_is_colorbar(ax) for ax in fig.axes) or any(
        ax.images or any(c.get_array() is not None for c in ax.collections) for ax in axes)
    bits = {
        "multi_panel": len(panels) > 1,
        "log_axis": any("log" in (ax.get_xscale(), ax.get_yscale()) for ax in axes),
        "error_bars": any(isinstance(c, ErrorbarContainer) for ax in axes for c in ax.containers),
        "legend": any(ax.get_legend() is not None for ax in axes) or bool(fig.legends),
        "many_series": any(_series_count(ax) > MANY_SERIES for ax in axes),
        "annotations": any(ax.texts for ax in axes),
        "dual_axis": len(axes) > len(panels) or any(_has_secondary_axis(ax) for ax in axes),
        "dense_points": _marker_count(axes) > DENSE_POINTS,
        "colour_map": colour,
        "non_cartesian": any(ax.name != "rectilinear" for ax in axes),
    }
    return [int(bits[name]) for name in CCV_NAMES]


def ccv_as_dict(ccv: list[int]) -> dict[str, int]:
    """The vector keyed by attribute name (for reading and for tests)."""
    if len(ccv) != len(CCV_NAMES):
        raise ValueError(f"a CCV has {len(CCV_NAMES)} bits, got {len(ccv)}: {ccv}")
    return dict(zip(CCV_NAMES, ccv, strict=True))
