"""``sample-astro``: astronomy-style charts with DomainCQA-style FQA/AQA items (DomainCQA, Table 1).

Every chart is drawn from physically motivated synthetic data with fixed seeds (Planck's law, Wien's law,
Hubble's law, a Schechter function, a Salpeter IMF, a trapezoid transit model, a Keplerian RV curve) or with
well-known parameters (51 Peg b, the Galactic Cepheid period–luminosity relation), as each chart's ``origin``
says. Numeric answers are computed from the same model that is drawn. Numeric-retrieval items carry the range
of the axis the value is read from (``axis_min``/``axis_max``; ``log_scale`` for logarithmic axes), which the
AstroChart numeric scorer needs (DomainCQA, Algorithm 3). Every item also carries its chart's Chart Complexity
Vector, read off the drawn figure (``astro_ccv``). Charts 1–5 are here, 6–12 in ``astro_b``, 13–18 in ``astro_c``
and 19–23 in ``astro_d``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from zuhyo.schema import AstroAspect, AstroCategory, AstroMeta, AstroQAType, ImageRef, ImageType, Sample, SourceInfo

SYNTHETIC = "synthetic (physically motivated model, fixed seed)"


@dataclass(frozen=True)
class AstroQA:
    """One QA item about a chart; ``answer`` is computed from the chart's model values."""

    suffix: str
    question: str
    answer: str
    qa_type: AstroQAType
    category: AstroCategory
    aspect: AstroAspect | None = None
    answer_kind: str = "open"
    axis: tuple[float, float] | None = None
    log_scale: bool = False
    key_points: tuple[str, ...] = ()


@dataclass(frozen=True)
class AstroChart:
    """A chart: how to draw it, what it shows, and its QA items."""

    id: str
    title: str
    image_type: ImageType
    origin: str
    draw: Callable[[], Figure]
    qas: list[AstroQA] = field(default_factory=list)
    values: dict[str, Any] = field(default_factory=dict)
    """The model numbers the answers were computed from (kept in each sample's metadata)."""


FQA, AQA = AstroQAType.FQA, AstroQAType.AQA
C = AstroCategory
A = AstroAspect


def _fig(size: tuple[float, float] = (6.4, 4.6)) -> Figure:
    fig = plt.figure(figsize=size)
    return fig


# --- 1. Hubble diagram -------------------------------------------------------------------------------------
def _hubble_data() -> dict[str, Any]:
    rng = np.random.default_rng(101)
    d = np.sort(rng.uniform(15, 420, 22))
    v = 70.0 * d + rng.normal(0, 900, d.size)
    slope, icpt = np.polyfit(d, v, 1)
    return {"d": d, "v": v, "slope": float(slope), "icpt": float(icpt)}


def _hubble_draw() -> Figure:
    h = _hubble_data()
    fig = _fig()
    ax = fig.add_subplot(111)
    ax.errorbar(h["d"], h["v"], xerr=0.1 * h["d"], yerr=900, fmt="o", color="k", ms=4, capsize=2, label="galaxies")
    xs = np.linspace(0, 450, 10)
    ax.plot(xs, h["slope"] * xs + h["icpt"], "r--", label="least-squares fit")
    ax.set_xlim(0, 450)
    ax.set_ylim(0, 32000)
    ax.set_xlabel("Distance (Mpc)")
    ax.set_ylabel("Recession velocity (km s$^{-1}$)")
    ax.legend(loc="upper left")
    ax.set_title("Hubble diagram")
    fig.tight_layout()
    return fig


# --- 2. Blackbody spectra ----------------------------------------------------------------------------------
WIEN_B_NM_K = 2.897771955e6  # Wien displacement constant in nm·K (CODATA 2018)


def _planck(lam_nm: np.ndarray, t: float) -> np.ndarray:
    h, c, k = 6.62607015e-34, 2.99792458e8, 1.380649e-23
    lam = lam_nm * 1e-9
    return 2 * h * c**2 / lam**5 / np.expm1(h * c / (lam * k * t))


def _blackbody_draw() -> Figure:
    fig = _fig()
    ax = fig.add_subplot(111)
    lam = np.logspace(2, 4, 600)
    for t, col in ((3000, "red"), (5800, "orange"), (10000, "blue")):
        ax.loglog(lam, _planck(lam, t), color=col, label=f"T = {t} K")
    ax.set_xlim(100, 10000)
    ax.set_ylim(1e9, 1e16)
    ax.set_xlabel("Wavelength (nm)")
    ax.set_ylabel(r"$B_\lambda$ (W m$^{-3}$ sr$^{-1}$)")
    ax.legend()
    ax.set_title("Blackbody spectra")
    fig.tight_layout()
    return fig


# --- 3. Transit light curve --------------------------------------------------------------------------------
TRANSIT = {"depth": 0.01, "t14": 2.8, "ingress": 0.3}


def _transit_model(t: np.ndarray) -> np.ndarray:
    half, ing, depth = TRANSIT["t14"] / 2, TRANSIT["ingress"], TRANSIT["depth"]
    x = np.abs(t)
    f = np.ones_like(t)
    f[x <= half - ing] = 1 - depth
    edge = (x > half - ing) & (x < half)
    f[edge] = 1 - depth * (half - x[edge]) / ing
    return f


def _transit_draw() -> Figure:
    rng = np.random.default_rng(303)
    t = np.linspace(-4, 4, 97)
    flux = _transit_model(t) + rng.normal(0, 0.0015, t.size)
    fig = _fig()
    ax = fig.add_subplot(111)
    ax.errorbar(t, flux, yerr=0.0015, fmt=".", color="0.3", capsize=0, label="photometry")
    tt = np.linspace(-4, 4, 800)
    ax.plot(tt, _transit_model(tt), color="C0", lw=2, label=f"model (depth {TRANSIT['depth'] * 100:.2f}%)")
    ax.set_xlim(-4, 4)
    ax.set_xticks(np.arange(-4, 4.5, 0.5), minor=True)
    ax.set_xlabel("Time from mid-transit (hours)")
    ax.set_ylabel("Normalized flux")
    ax.grid(which="both", alpha=0.3)
    ax.legend(loc="lower left")
    ax.set_title("Transit light curve")
    fig.tight_layout()
    return fig


# --- 4. Cepheid period-luminosity --------------------------------------------------------------------------
def _cepheid_draw() -> Figure:
    rng = np.random.default_rng(404)
    fig = _fig()
    ax = fig.add_subplot(111)
    for n, (label, marker, fill) in enumerate((("Milky Way (parallax)", "o", "C3"), ("LMC", "s", "none"))):
        logp = rng.uniform(0.4, 1.7, 14)
        mv = -2.43 * (logp - 1) - 4.05 + rng.normal(0, 0.15, logp.size)
        ax.errorbar(logp, mv, yerr=0.12 + 0.05 * n, fmt=marker, mfc=fill, mec="C3" if n == 0 else "C0",
                    ecolor="0.5", capsize=2, label=label)
    x = np.linspace(0.3, 1.8, 10)
    ax.plot(x, -2.43 * (x - 1) - 4.05, "k-", lw=1)
    ax.invert_yaxis()
    ax.set_xlabel(r"$\log_{10}$ P (days)")
    ax.set_ylabel(r"$M_V$ (mag)")
    ax.legend()
    ax.set_title("Cepheid period–luminosity relation")
    fig.tight_layout()
    return fig


# --- 5. HR diagram ------------------------------------------------------------------------------------------
def _hr_draw() -> Figure:
    rng = np.random.default_rng(505)
    logt_ms = rng.uniform(3.5, 4.45, 260)
    logl_ms = 6.2 * (logt_ms - 3.762) + rng.normal(0, 0.2, logt_ms.size)
    logt_g = rng.uniform(3.55, 3.72, 60)
    logl_g = rng.uniform(1.3, 3.2, 60)
    logt_wd = rng.uniform(3.8, 4.3, 25)
    logl_wd = -3.2 + 2.0 * (logt_wd - 3.8) + rng.normal(0, 0.15, 25)
    fig = _fig()
    ax = fig.add_subplot(111)
    t = np.concatenate([logt_ms, logt_g, logt_wd])
    lum = np.concatenate([logl_ms, logl_g, logl_wd])
    sc = ax.scatter(10**t, 10**lum, c=t, cmap="RdYlBu", s=10, edgecolor="none")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.invert_xaxis()
    ax.set_xlabel("Effective temperature $T_{\\rm eff}$ (K)")
    ax.set_ylabel(r"Luminosity ($L/L_\odot$)")
    fig.colorbar(sc, label=r"$\log_{10} T_{\rm eff}$")
    ax.set_title("Hertzsprung–Russell diagram")
    fig.tight_layout()
    return fig


# --- the chart list -----------------------------------------------------------------------------------------
def charts() -> list[AstroChart]:
    """All ``sample-astro`` charts with their QA items (answers computed from the drawn models)."""
    from zuhyo_samples import astro_b as b
    from zuhyo_samples import astro_c, astro_d

    h = _hubble_data()
    v300 = h["slope"] * 300 + h["icpt"]
    peak_nm = WIEN_B_NM_K / 5800
    phi22 = float(b.schechter(-22.0))
    mb0, mb15 = (round(float(b.sn_mag(np.array([t]), b.SN["peak_b"], b.SN["dm15"])[0]), 2) for t in (0, 15))
    n10 = float(f"{1000 * 10.0**b.SALPETER_SLOPE:.3g}")  # the value printed on the chart
    strongest = max(b.LINES, key=lambda k: b.LINES[k][1])
    return [
        AstroChart("astro_hubble", "Hubble diagram", ImageType.SCATTER, SYNTHETIC + ": v = H0·d, H0 = 70 km/s/Mpc",
                   _hubble_draw, [
                       AstroQA("point", "According to the least-squares fit line, what recession velocity (km/s) "
                               "corresponds to a distance of 300 Mpc?", f"{round(v300, -1):.0f}", FQA, C.DATA,
                               A.POINT, "numeric_retrieval", (0, 32000)),
                       AstroQA("kb", "What physical quantity does the slope of the fitted line estimate, and what "
                               "timescale does its inverse give?",
                               f"The Hubble constant, about {h['slope']:.0f} km/s/Mpc; its inverse, the Hubble time, "
                               "is about 14 billion years.", AQA, C.KB_INFERENCE,
                               key_points=("slope is the Hubble constant H0", f"H0 ≈ {h['slope']:.0f} km/s/Mpc",
                                           "1/H0 (Hubble time) ≈ 14 Gyr, the age scale of the Universe")),
                   ], {"fit_slope": h["slope"], "fit_intercept": h["icpt"]}),
        AstroChart("astro_blackbody", "Blackbody spectra", ImageType.LINE,
                   "Planck's law (exact), T = 3000/5800/10000 K", _blackbody_draw, [
                       AstroQA("color", "Which colour is used for the T = 10000 K curve: red, orange or blue?", "blue",
                               FQA, C.VISUAL, A.COLOR, "choice"),
                       AstroQA("point", "At what wavelength (nm) does the T = 5800 K curve reach its maximum?",
                               f"{peak_nm:.0f}", FQA, C.DATA, A.POINT, "numeric_retrieval", (100, 10000), True),
                   ], {"wien_peak_5800K_nm": peak_nm}),
        AstroChart("astro_transit", "Transit light curve", ImageType.SCATTER,
                   SYNTHETIC + ": trapezoid transit, depth 1%, T14 = 2.8 h", _transit_draw, [
                       AstroQA("interval", "What is the total transit duration (first to fourth contact) of the "
                               "model, in hours?", f"{TRANSIT['t14']:.1f}", FQA, C.DATA, A.INTERVAL,
                               "numeric_retrieval", (-4, 4)),
                       AstroQA("calc", "Using the transit depth stated in the legend, what is the planet-to-star "
                               "radius ratio Rp/R*?", f"{TRANSIT['depth'] ** 0.5:.1f}", FQA, C.DATA, A.CALCULATION,
                               "numeric_exact"),
                   ], dict(TRANSIT)),
        AstroChart("astro_cepheid", "Cepheid period-luminosity relation", ImageType.SCATTER,
                   SYNTHETIC + ": M_V = -2.43 (log P - 1) - 4.05 (Benedict et al. 2007)", _cepheid_draw, [
                       AstroQA("style", "What marker style is used for the LMC Cepheids?", "open (unfilled) squares",
                               FQA, C.VISUAL, A.STYLE, key_points=("squares", "open / unfilled markers")),
                       AstroQA("inference", "How does the absolute magnitude change with period, and what does this "
                               "imply about luminosity?",
                               "Magnitude becomes more negative as log P increases: longer-period Cepheids are more "
                               "luminous, following a linear relation in log P.", FQA, C.INFERENCE,
                               key_points=("longer period → more negative (brighter) M_V", "luminosity increases with "
                                           "period", "approximately linear in log P")),
                   ], {"slope": -2.43, "zero_point": -4.05}),
        AstroChart("astro_hr", "Hertzsprung-Russell diagram", ImageType.SCATTER,
                   SYNTHETIC + ": main sequence L ∝ T^6.2, giants and white dwarfs", _hr_draw, [
                       AstroQA("text", "What quantity is on the x-axis and in which unit?", "Effective temperature "
                               "(T_eff) in kelvin", FQA, C.VISUAL, A.TEXT, key_points=("effective temperature",
                                                                                        "kelvin (K)")),
                       AstroQA("kb_summary", "Summarize what this diagram shows about stellar populations.",
                               "Most stars lie on the main sequence from hot, luminous to cool, faint stars; cool "
                               "luminous giants sit above it and hot faint white dwarfs below it; temperature "
                               "increases to the left.", AQA, C.KB_SUMMARY,
                               key_points=("main sequence from hot/luminous to cool/faint", "giants: cool and luminous",
                                           "white dwarfs: hot and faint", "temperature axis increases to the left")),
                   ]),
        AstroChart("astro_rotation", "Galaxy rotation curves", ImageType.LINE,
                   SYNTHETIC + ": v(r) = v_flat (1 - e^(-r/r_s)) versus a Keplerian fall-off", b.rotation_draw, [
                       AstroQA("layout", "How many panels does the figure contain and how are they arranged?",
                               "4 panels in a 2×2 grid", FQA, C.VISUAL, A.LAYOUT,
                               key_points=("four panels", "2 × 2 grid", "shared x-axis")),
                       AstroQA("summary", "Summarize the behaviour common to all panels.",
                               "Observed rotation velocities rise and then stay flat out to large radii, while the "
                               "visible-mass prediction declines, so the discrepancy grows with radius.",
                               FQA, C.SUMMARY, key_points=("observed curves flat at large radius", "visible-mass "
                                                           "prediction declines", "discrepancy grows with radius")),
                   ], {"galaxies": [list(g) for g in b.GALAXIES]}),
        AstroChart("astro_spectrum", "Emission-line galaxy spectrum", ImageType.LINE,
                   SYNTHETIC + ": Gaussian lines at laboratory wavelengths", b.spectrum_draw, [
                       AstroQA("point", "At what rest wavelength (Å) is the strongest emission line?",
                               f"{b.LINES[strongest][0]:.0f}", FQA, C.DATA, A.POINT, "numeric_retrieval",
                               (4000, 7000)),
                       AstroQA("kb", "Which ion produces the strongest line, and is the transition permitted or "
                               "forbidden?", "Doubly ionised oxygen, [O III] λ5007 — a forbidden transition.", AQA,
                               C.KB_INFERENCE, key_points=("[O III] (doubly ionised oxygen)", "forbidden line",
                                                           "arises in low-density ionised gas")),
                   ], {"lines": {k: list(v) for k, v in b.LINES.items()}}),
        AstroChart("astro_lf", "Galaxy luminosity function", ImageType.LINE,
                   SYNTHETIC + ": Schechter function (Blanton et al. 2003 r-band parameters)", b.lf_draw, [
                       AstroQA("point", "What is the value of Φ of the Schechter fit at M = -22 "
                               "(h^3 Mpc^-3 mag^-1)?", f"{phi22:.2g}", FQA, C.DATA, A.POINT, "numeric_retrieval",
                               (1e-6, 1e-1), True),
                       AstroQA("inference", "Where does the number density fall most steeply, and what shape does "
                               "the faint end have?", "It falls steeply (exponentially) at the bright end, brighter "
                               "than M* ≈ -20.4; the faint end is a nearly flat power law.", FQA, C.INFERENCE,
                               key_points=("steep exponential cut-off at the bright end", "M* around -20.4",
                                           "faint end nearly flat")),
                   ], dict(b.SCHECHTER)),
        AstroChart("astro_sn", "Type Ia supernova light curves", ImageType.LINE,
                   SYNTHETIC + ": SN Ia-like template, Δm15(B) = 1.10", b.sn_draw, [
                       AstroQA("color", "Which band is plotted in green: B or V?", "V", FQA, C.VISUAL, A.COLOR,
                               "choice"),
                       AstroQA("calc", "Using the two annotated B magnitudes, what is Δm15(B), the decline in B from "
                               "maximum to 15 days later (mag)?", f"{mb15 - mb0:.2f}", FQA, C.DATA, A.CALCULATION,
                               "numeric_exact"),
                   ], {"B_max": mb0, "B_15": mb15}),
        AstroChart("astro_rv", "Radial-velocity curve", ImageType.SCATTER,
                   "well-known parameters of 51 Peg b (K = 55.9 m/s, P = 4.2308 d), synthetic points", b.rv_draw, [
                       AstroQA("interval", "What is the peak-to-peak amplitude of the Keplerian fit (m/s)?",
                               f"{2 * b.RV['k']:.1f}", FQA, C.DATA, A.INTERVAL, "numeric_retrieval", (-100, 100)),
                       AstroQA("kb", "For a solar-mass host star, what kind of planet does this curve indicate?",
                               "A hot Jupiter: minimum mass about half a Jupiter mass (M sin i ≈ 0.47 M_J) on a "
                               "4.2-day orbit very close to the star.", AQA, C.KB_INFERENCE,
                               key_points=("hot Jupiter", "M sin i ≈ 0.5 Jupiter masses", "very short period, close-in "
                                           "orbit")),
                   ], dict(b.RV)),
        AstroChart("astro_imf", "Initial mass function", ImageType.LINE,
                   "analytic Salpeter (1955) and Kroupa (2001) mass functions", b.imf_draw, [
                       AstroQA("calc", "Using the two labelled points on the solid line, what is its slope in this "
                               "log–log plot?", f"{np.log10(n10 / 1000):.2f}", FQA, C.DATA, A.CALCULATION,
                               "numeric_exact"),
                       AstroQA("style", "What line style is used for the Kroupa (2001) mass function?", "dashed",
                               FQA, C.VISUAL, A.STYLE, key_points=("dashed line",)),
                   ], {"salpeter_slope": b.SALPETER_SLOPE, "label_n10": n10}),
        AstroChart("astro_periodogram", "Periodogram", ImageType.LINE,
                   SYNTHETIC + ": RR Lyrae-like pulsation, f1 = 1.7637 c/d with harmonics", b.periodogram_draw, [
                       AstroQA("point", "At what frequency (cycles per day) is the highest peak?", f"{b.F1:.2f}",
                               FQA, C.DATA, A.POINT, "numeric_retrieval", (0, 10)),
                       AstroQA("summary", "Summarize the structure of the periodogram.",
                               "A dominant peak near 1.76 c/d with weaker harmonics at integer multiples (about "
                               "3.5, 5.3 and 7.1 c/d) whose power decreases, over a low noise floor.", FQA, C.SUMMARY,
                               key_points=("dominant peak near 1.76 c/d", "harmonics at integer multiples",
                                           "harmonic power decreases", "low noise floor")),
                   ], {"f1": b.F1}),
    ] + astro_c.charts() + astro_d.charts()


def chart_ccv(chart: AstroChart) -> list[int]:
    """The chart's Chart Complexity Vector, read off a fresh drawing of it (see ``astro_ccv``)."""
    from zuhyo_samples.astro_ccv import figure_ccv

    fig = chart.draw()
    try:
        return figure_ccv(fig)
    finally:
        plt.close(fig)


def chart_samples(chart: AstroChart, image: ImageRef) -> list[Sample]:
    """The chart's QA items as Samples sharing one image (and one CCV)."""
    ccv = chart_ccv(chart)
    out = []
    for qa in chart.qas:
        axis_min, axis_max = qa.axis if qa.axis else (None, None)
        meta = AstroMeta(qa_type=qa.qa_type, category=qa.category, aspect=qa.aspect, answer_kind=qa.answer_kind,
                         axis_min=axis_min, axis_max=axis_max, log_scale=qa.log_scale, key_points=list(qa.key_points),
                         ccv=ccv)
        out.append(Sample(id=f"{chart.id}_{qa.suffix}", benchmark="sample-astro", question=qa.question,
                          answers=[qa.answer], image=image, image_type=chart.image_type, astro=meta,
                          source=SourceInfo(title=chart.title, context=chart.origin, license="CC0-1.0",
                                            publisher="zuhyo (rendered by scripts/render_samples.py)"),
                          metadata={"data": chart.origin, "model_values": chart.values}))
    return out
