"""``sample-astro`` charts 19–23: a supernova Hubble diagram with residuals, the exoplanet mass–radius diagram,
the solar cycle on two y-axes, a gravitational-wave chirp with its time–frequency map, and the M–σ relation.

Each chart's numbers come from the model functions here; QA answers are computed from them in :func:`charts`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from scipy.integrate import quad

from zuhyo.schema import ImageType
from zuhyo_samples.astro import AQA, FQA, SYNTHETIC, A, AstroChart, AstroQA, C

# --- 19. Type Ia supernova Hubble diagram with residuals ----------------------------------------------------
H0 = 70.0
C_KMS = 299792.458
COSMOLOGIES = {"ΛCDM (Ωm = 0.3, ΩΛ = 0.7)": (0.3, 0.7), "matter only (Ωm = 1)": (1.0, 0.0),
               "empty (Ωm = 0, ΩΛ = 0)": (0.0, 0.0)}


def distance_modulus(z: float, om: float, ol: float) -> float:
    """μ = 5 log10(d_L / 10 pc) for a Friedmann model with curvature Ωk = 1 − Ωm − ΩΛ (H0 = 70 km/s/Mpc)."""
    ok = 1.0 - om - ol
    dc, _ = quad(lambda x: 1.0 / np.sqrt(om * (1 + x) ** 3 + ok * (1 + x) ** 2 + ol), 0.0, z)
    dh = C_KMS / H0
    if ok > 1e-12:
        dm = dh / np.sqrt(ok) * np.sinh(np.sqrt(ok) * dc)
    elif ok < -1e-12:
        dm = dh / np.sqrt(-ok) * np.sin(np.sqrt(-ok) * dc)
    else:
        dm = dh * dc
    return float(5 * np.log10((1 + z) * dm * 1e6 / 10))


def _mu_curve(z: np.ndarray, om: float, ol: float) -> np.ndarray:
    return np.array([distance_modulus(float(zz), om, ol) for zz in z])


def snhubble_draw() -> Figure:
    rng = np.random.default_rng(1919)
    z = np.sort(10 ** rng.uniform(np.log10(0.012), np.log10(1.6), 70))
    err = 0.12 + 0.08 * z
    mu = _mu_curve(z, 0.3, 0.7) + rng.normal(0, 1, z.size) * err
    zz = np.logspace(np.log10(0.01), np.log10(2.0), 120)
    empty = _mu_curve(zz, 0.0, 0.0)
    fig, (top, bot) = plt.subplots(2, 1, figsize=(6.4, 5.8), sharex=True, gridspec_kw={"height_ratios": [2, 1]})
    top.errorbar(z, mu, yerr=err, fmt="o", ms=3, color="k", ecolor="0.6", capsize=0, label="SNe Ia")
    bot.errorbar(z, mu - _mu_curve(z, 0.0, 0.0), yerr=err, fmt="o", ms=3, color="k", ecolor="0.6", capsize=0)
    for (label, (om, ol)), (col, ls) in zip(COSMOLOGIES.items(), (("C3", "-"), ("C0", "--"), ("0.4", ":")),
                                            strict=True):
        curve = _mu_curve(zz, om, ol)
        top.plot(zz, curve, color=col, ls=ls, lw=1.4, label=label)
        bot.plot(zz, curve - empty, color=col, ls=ls, lw=1.4)
    top.set_xscale("log")
    top.set_xlim(0.01, 2.0)
    top.set_ylim(32, 47)
    top.set_ylabel(r"Distance modulus $\mu$ (mag)")
    top.legend(loc="upper left", fontsize=8)
    top.set_title("Type Ia supernova Hubble diagram")
    bot.set_ylim(-1.0, 0.8)
    bot.set_ylabel(r"$\mu - \mu_{\rm empty}$")
    bot.set_xlabel("Redshift z")
    fig.tight_layout()
    return fig


# --- 20. Exoplanet mass–radius diagram ----------------------------------------------------------------------
#: Solar-system reference planets (mass in M⊕, radius in R⊕).
SOLAR_SYSTEM = {"Earth": (1.0, 1.0), "Neptune": (17.15, 3.88), "Saturn": (95.16, 9.14), "Jupiter": (317.8, 11.21)}


def massradius_data() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(2020)
    m_small = 10 ** rng.uniform(0, 1.4, 70)
    gaseous = rng.random(70) < 0.5  # sub-Neptunes with H/He envelopes sit above the rocky line
    r_small = m_small**0.27 * np.where(gaseous, 1.6 + 0.5 * rng.random(70), 1.0 + 0.05 * rng.normal(size=70))
    m_big = 10 ** rng.uniform(1.7, 3.5, 60)
    t_all = rng.uniform(300, 2300, 130)
    inflation = 1 + 0.35 * np.clip((t_all[70:] - 1000) / 1300, 0, None)  # hot Jupiters are inflated
    r_big = 11.2 * (m_big / 317.8) ** -0.03 * inflation * (1 + 0.04 * rng.normal(size=60))
    return {"m": np.concatenate([m_small, m_big]), "r": np.concatenate([r_small, r_big]), "teq": t_all}


def massradius_draw() -> Figure:
    d = massradius_data()
    fig = plt.figure(figsize=(6.8, 4.8))
    ax = fig.add_subplot(111)
    sc = ax.scatter(d["m"], d["r"], c=d["teq"], cmap="plasma", s=18, edgecolor="k", linewidth=0.3)
    mm = np.logspace(-0.3, 1.6, 50)
    ax.plot(mm, mm**0.27, "k-", lw=1, label="Earth-like rock")
    ax.plot(mm, 1.26 * mm**0.27, "k--", lw=1, label="50% water")
    for name, (m, r) in SOLAR_SYSTEM.items():
        ax.plot([m], [r], marker="*", color="C2", ms=11, mec="k", ls="none")
        ax.annotate(name, (m, r), xytext=(6, -10), textcoords="offset points", fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(0.5, 5000)
    ax.set_ylim(0.7, 25)
    ax.set_xlabel(r"Planet mass ($M_\oplus$)")
    ax.set_ylabel(r"Planet radius ($R_\oplus$)")
    ax.legend(loc="upper left", fontsize=8)
    fig.colorbar(sc, label="Equilibrium temperature (K)")
    ax.set_title("Exoplanet mass–radius diagram")
    fig.tight_layout()
    return fig


# --- 21. Solar cycle: sunspot number and F10.7 on two y-axes ------------------------------------------------
#: Cycles 19–24 (number, start year, smoothed maximum), close to the SILSO v2 record.
CYCLES = ((19, 1954.3, 285.0), (20, 1964.8, 156.6), (21, 1976.2, 232.9), (22, 1986.7, 212.5),
          (23, 1996.4, 180.3), (24, 2008.9, 116.4))
CYCLE_RISE, CYCLE_SHAPE = 4.3, 3.0  # years from start to maximum; shape exponent of the rise
SOLAR_T = np.round(np.arange(1955.0, 2020.0 + 1e-9, 1 / 12), 4)


def sunspot_number(t: np.ndarray) -> np.ndarray:
    """Sum of cycles, each A·(x/t_r)^k·exp(k(1 − x/t_r)) for x = t − start > 0 (peaks A at x = t_r)."""
    total = np.zeros_like(t, dtype=float)
    for _, start, amp in CYCLES:
        x = np.clip(t - start, 0, None) / CYCLE_RISE
        total += amp * x**CYCLE_SHAPE * np.exp(CYCLE_SHAPE * (1 - x))
    return total


def f107(ssn: np.ndarray) -> np.ndarray:
    """F10.7 (sfu) from the sunspot number by the quadratic relation of Tapping & Valdés (2011), rounded."""
    return 67.0 + 0.572 * ssn + 0.0032 * ssn**2 - 0.0000089 * ssn**3


def cycle_maxima() -> dict[int, float]:
    """Year of the maximum of the drawn sunspot curve within each cycle's window."""
    s = sunspot_number(SOLAR_T)
    out = {}
    for n, start, _ in CYCLES:
        win = (SOLAR_T >= max(start + 1, SOLAR_T[0])) & (SOLAR_T < start + 8)
        out[n] = float(SOLAR_T[win][np.argmax(s[win])])
    return out


def sunspot_draw() -> Figure:
    s = sunspot_number(SOLAR_T)
    fig = plt.figure(figsize=(7.4, 4.4))
    ax = fig.add_subplot(111)
    ax.plot(SOLAR_T, s, color="C1", lw=1.6, label="sunspot number (smoothed)")
    ax2 = ax.twinx()
    ax2.plot(SOLAR_T, f107(s), color="C0", ls="--", lw=1.2, label="F10.7 radio flux")
    for n, year in cycle_maxima().items():
        if n in (21, 22):
            peak = float(sunspot_number(np.array([year]))[0])
            ax.annotate(f"Cycle {n}", (year, peak), xytext=(0, 18), textcoords="offset points", ha="center",
                        fontsize=9, arrowprops={"arrowstyle": "->"})
    ax.set_xlim(1955, 2020)
    ax.set_ylim(0, 330)
    ax2.set_ylim(60, 320)
    ax.set_xlabel("Year")
    ax.set_ylabel("Sunspot number", color="C1")
    ax2.set_ylabel("F10.7 (sfu)", color="C0")
    lines = ax.get_lines()[:1] + ax2.get_lines()
    ax.legend(lines, [ln.get_label() for ln in lines], loc="upper right", fontsize=8)
    ax.set_title("Solar activity cycles 19–24")
    fig.tight_layout()
    return fig


# --- 22. Gravitational-wave chirp ---------------------------------------------------------------------------
GW = {"chirp_mass_msun": 30.0, "f_ringdown_hz": 250.0, "tau_ringdown_s": 0.004, "h_peak_1e21": 1.2}
GW_T = np.linspace(-0.25, 0.05, 3001)
T_SUN_S = 4.925490947e-6  # G M_sun / c^3


def _inspiral_f(tau: np.ndarray) -> np.ndarray:
    # Leading-order post-Newtonian frequency: f = (1/π) (5 / 256τ)^{3/8} (G Mc / c^3)^{-5/8}.
    return (5 / (256 * tau)) ** 0.375 * (GW["chirp_mass_msun"] * T_SUN_S) ** -0.625 / np.pi


def gw_signal() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(strain in 10^-21, frequency track in Hz, amplitude envelope) on :data:`GW_T`; merger at t = 0."""
    f_rd = GW["f_ringdown_hz"]
    tau_m = 5 / 256 * (np.pi * f_rd) ** (-8 / 3) * (GW["chirp_mass_msun"] * T_SUN_S) ** (-5 / 3)
    pre = GW_T < 0
    tau = tau_m - GW_T[pre]
    freq = np.where(pre, 0.0, f_rd)
    freq[pre] = _inspiral_f(tau)
    phase = np.zeros_like(GW_T)
    phase[pre] = -2 * (5 * GW["chirp_mass_msun"] * T_SUN_S) ** -0.625 * tau**0.625
    phase[~pre] = phase[pre][-1] + 2 * np.pi * f_rd * GW_T[~pre]
    amp = np.where(pre, GW["h_peak_1e21"] * (freq / f_rd) ** (2 / 3),
                   GW["h_peak_1e21"] * np.exp(-np.clip(GW_T, 0, None) / GW["tau_ringdown_s"]))
    return amp * np.cos(phase), freq, amp


def gw_draw() -> Figure:
    rng = np.random.default_rng(2222)
    h, freq, amp = gw_signal()
    fig = plt.figure(figsize=(6.8, 5.6))
    grid = fig.add_gridspec(2, 2, width_ratios=(40, 1))  # a colour-bar column beside the lower panel only
    top = fig.add_subplot(grid[0, 0])
    bot = fig.add_subplot(grid[1, 0], sharex=top)
    cax = fig.add_subplot(grid[1, 1])
    top.plot(GW_T, h, color="C0", lw=0.8)
    top.set_ylim(-1.5, 1.5)
    top.set_ylabel(r"Strain ($10^{-21}$)")
    top.set_title("Binary black-hole merger: strain and time–frequency map")
    t_grid = GW_T[::15]
    f_grid = np.logspace(np.log10(20), np.log10(512), 80)
    energy = (amp[::15, None] ** 2) * np.exp(-0.5 * ((np.log(f_grid[None, :]) - np.log(np.maximum(
        freq[::15, None], 1.0))) / 0.12) ** 2)
    energy = energy / energy.max() + 0.04 * rng.random(energy.shape)
    mesh = bot.pcolormesh(t_grid, f_grid, energy.T, cmap="viridis", shading="nearest")
    bot.set_yscale("log")
    bot.set_ylim(20, 512)
    bot.set_ylabel("Frequency (Hz)")
    bot.set_xlabel("Time relative to merger (s)")
    bot.set_xlim(-0.25, 0.05)
    fig.colorbar(mesh, cax=cax, label="Normalized energy")
    top.tick_params(labelbottom=False)
    fig.tight_layout()
    return fig


# --- 23. M–σ relation ---------------------------------------------------------------------------------------
MSIGMA = {"m0": 3.1e8, "slope": 4.38, "scatter_dex": 0.29}  # Kormendy & Ho (2013), ellipticals + bulges


def msigma_fit(sigma: np.ndarray | float) -> np.ndarray:
    """M_BH (M☉) = 3.1×10^8 (σ / 200 km/s)^4.38."""
    return MSIGMA["m0"] * (np.asarray(sigma, dtype=float) / 200.0) ** MSIGMA["slope"]


def msigma_draw() -> Figure:
    rng = np.random.default_rng(2323)
    fig = plt.figure(figsize=(6.4, 4.8))
    ax = fig.add_subplot(111)
    for (lo, hi, n, offset), label, fmt in (((150, 380, 25, 0.0), "ellipticals", "o"),
                                            ((90, 220, 15, 0.0), "classical bulges", "s"),
                                            ((70, 150, 10, -0.5), "pseudobulges", "D")):
        sig = rng.uniform(lo, hi, n)
        logm = np.log10(msigma_fit(sig)) + offset + rng.normal(0, MSIGMA["scatter_dex"], n)
        dex = rng.uniform(0.08, 0.25, n)
        m = 10**logm
        ax.errorbar(sig, m, xerr=0.05 * sig, yerr=[m * (1 - 10**-dex), m * (10**dex - 1)], fmt=fmt, ms=4,
                    capsize=1.5, label=label, mfc="none" if offset else None)
    s = np.linspace(60, 420, 100)
    ax.plot(s, msigma_fit(s), "k-", label=rf"fit: $3.1\times10^8\,(\sigma/200)^{{{MSIGMA['slope']}}}\,M_\odot$")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(60, 420)
    ax.set_ylim(1e5, 1e11)
    ax.set_xlabel(r"Velocity dispersion $\sigma$ (km s$^{-1}$)")
    ax.set_ylabel(r"Black-hole mass $M_{\rm BH}$ ($M_\odot$)")
    ax.legend(loc="upper left", fontsize=8)
    ax.set_title(r"The $M_{\rm BH}$–$\sigma$ relation")
    fig.tight_layout()
    return fig


# --- the chart list -----------------------------------------------------------------------------------------
def charts() -> list[AstroChart]:
    """Charts 19–23 with their QA items (answers computed from the drawn models)."""
    mu1 = distance_modulus(1.0, 0.3, 0.7)
    maxima = cycle_maxima()
    h, _, _ = gw_signal()
    h_max = float(np.max(np.abs(h)))
    m300 = float(msigma_fit(300.0))
    return [
        AstroChart("astro_snhubble", "Supernova Hubble diagram", ImageType.SCATTER,
                   SYNTHETIC + ": SNe Ia drawn from flat ΛCDM (Ωm = 0.3, H0 = 70) with 0.12–0.25 mag errors; "
                   "curves from the Friedmann luminosity distance", snhubble_draw, [
                       AstroQA("point", "According to the ΛCDM curve, what is the distance modulus at z = 1?",
                               f"{mu1:.2f}", FQA, C.DATA, A.POINT, "numeric_retrieval", (32, 47)),
                       AstroQA("kb_summary", "Summarize what the supernova data imply about the expansion of the "
                               "Universe.", "Distant supernovae lie above the empty-universe line in the residual "
                               "panel and far above the matter-only model: they are fainter than a decelerating "
                               "universe allows and follow ΛCDM, so the expansion is accelerating, driven by dark "
                               "energy (a cosmological constant).", AQA, C.KB_SUMMARY,
                               key_points=("high-z supernovae fainter than in a matter-only universe",
                                           "data follow the ΛCDM curve", "expansion is accelerating",
                                           "dark energy / cosmological constant")),
                   ], {"mu_lcdm_z1": mu1, "H0": H0}),
        AstroChart("astro_massradius", "Exoplanet mass-radius diagram", ImageType.SCATTER,
                   SYNTHETIC + ": rocky R = M^0.27, H/He sub-Neptunes, giants ~1 R_J inflated above T_eq = 1000 "
                   "K; solar-system planets at their real values", massradius_draw, [
                       AstroQA("color", "Do the yellow markers represent hotter or cooler planets?", "hotter", FQA,
                               C.VISUAL, A.COLOR, "choice"),
                       AstroQA("inference", "How does planet radius depend on mass above about 100 Earth masses, "
                               "compared with smaller planets, and which giants are largest?",
                               "Below ~20 Earth masses radius grows with mass; above ~100 Earth masses radius stays "
                               "near one Jupiter radius (about 11 Earth radii) whatever the mass, and the hottest "
                               "giants are the most inflated.", FQA, C.INFERENCE,
                               key_points=("small planets: radius increases with mass", "giants: radius nearly "
                                           "independent of mass (~1 R_J)", "hottest giants are inflated")),
                   ], {"solar_system": {k: list(v) for k, v in SOLAR_SYSTEM.items()}}),
        AstroChart("astro_sunspot", "Solar activity cycles", ImageType.LINE,
                   SYNTHETIC + ": cycles 19–24 with SILSO-like start years and maxima; F10.7 from a cubic "
                   "sunspot-number relation", sunspot_draw, [
                       AstroQA("interval", "How many years separate the maxima labelled 'Cycle 21' and "
                               "'Cycle 22'?", f"{maxima[22] - maxima[21]:.1f}", FQA, C.DATA, A.INTERVAL,
                               "numeric_retrieval", (1955, 2020)),
                       AstroQA("text", "What quantity is plotted against the right-hand y-axis, and in which unit?",
                               "The F10.7 solar radio flux (10.7 cm), in solar flux units (sfu).", FQA, C.VISUAL,
                               A.TEXT, key_points=("F10.7 radio flux", "solar flux units (sfu)")),
                   ], {"cycle_maxima": {str(k): v for k, v in maxima.items()}}),
        AstroChart("astro_gw", "Gravitational-wave chirp", ImageType.LINE,
                   SYNTHETIC + ": leading-order post-Newtonian chirp, chirp mass 30 M☉, ringdown at 250 Hz "
                   "(τ = 4 ms); time–frequency energy along the frequency track", gw_draw, [
                       AstroQA("point", "In the upper panel, what is the largest absolute strain value "
                               "reached (positive or negative), in units of 10^-21?", f"{h_max:.2f}", FQA, C.DATA,
                               A.POINT, "numeric_retrieval", (-1.5, 1.5)),
                       AstroQA("summary", "Summarize how the signal evolves with time.",
                               "A chirp: the oscillation frequency rises from about 30 Hz to about 250 Hz while the "
                               "amplitude grows, peaking at the merger at t = 0, after which the signal dies away "
                               "within a few milliseconds (ringdown).", FQA, C.SUMMARY,
                               key_points=("frequency increases (chirp)", "amplitude increases up to merger at t = 0",
                                           "rapid decay after merger (ringdown)")),
                   ], dict(GW)),
        AstroChart("astro_msigma", "Black-hole mass versus velocity dispersion", ImageType.SCATTER,
                   SYNTHETIC + ": M_BH = 3.1×10^8 (σ/200)^4.38 M☉ (Kormendy & Ho 2013) with 0.29 dex scatter; "
                   "pseudobulges 0.5 dex below", msigma_draw, [
                       AstroQA("point", "According to the fit line, what black-hole mass (in solar masses) "
                               "corresponds to σ = 300 km/s?", f"{m300:.2e}", FQA, C.DATA, A.POINT,
                               "numeric_retrieval", (1e5, 1e11), True),
                       AstroQA("calc", "Using the exponent in the legend, by what factor does the black-hole mass "
                               "grow when σ doubles? Give one decimal place.", f"{2 ** MSIGMA['slope']:.1f}", FQA,
                               C.DATA, A.CALCULATION, "numeric_exact"),
                   ], dict(MSIGMA)),
    ]
