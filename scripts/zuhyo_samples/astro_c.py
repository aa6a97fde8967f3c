"""``sample-astro`` charts 13–18: a cluster colour–magnitude diagram, a line fit with residuals, a redshift
histogram, an all-sky map, the cosmic-ray spectrum and the CMB power spectrum (synthetic models, fixed seeds).

Each ``*_data`` function holds the numbers that are drawn; QA answers are computed from them in :func:`charts`.
"""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from zuhyo.schema import ImageType
from zuhyo_samples.astro import AQA, FQA, SYNTHETIC, A, AstroChart, AstroQA, C

# --- 13. Open-cluster colour–magnitude diagram ---------------------------------------------------------------
#: Zero-age main sequence (B−V, M_V) for dwarfs A0V…M0V (standard spectral-type calibration, rounded).
ZAMS = ((0.0, 0.6), (0.3, 2.7), (0.58, 4.4), (0.65, 4.8), (0.8, 5.9), (1.15, 7.3), (1.4, 8.8))
#: Isochrone above the turn-off: blue hook, subgiant branch, red-giant branch (schematic, B−V, M_V).
ISO_UPPER = ((0.42, 3.1), (0.50, 2.8), (0.85, 2.9), (0.95, 2.0), (1.10, 0.5), (1.30, -1.0))
CLUSTER_DM = 10.0  # distance modulus: d = 10^(1 + μ/5) pc = 1000 pc


def zams_mv(bv: np.ndarray) -> np.ndarray:
    """M_V on the main sequence, interpolated in :data:`ZAMS`."""
    x, y = zip(*ZAMS, strict=True)
    return np.interp(bv, x, y)


def cmd_data() -> dict[str, Any]:
    rng = np.random.default_rng(1313)
    bv_ms = rng.uniform(0.45, 1.4, 230) + rng.normal(0, 0.02, 230)
    v_ms = zams_mv(bv_ms) + CLUSTER_DM + rng.normal(0, 0.08, 230)
    binary = rng.random(230) < 0.15  # unresolved equal-mass binaries sit 0.75 mag above the sequence
    v_ms = v_ms - 0.75 * binary
    bv_g = np.concatenate([rng.normal(1.0, 0.03, 12), np.interp(rng.uniform(0, 1, 10), [0, 1], [0.95, 1.25])])
    v_g = np.concatenate([rng.normal(0.7, 0.08, 12), np.interp(bv_g[12:], [0.95, 1.3], [2.0, -1.0])]) + CLUSTER_DM
    iso_bv = np.concatenate([np.linspace(1.4, 0.45, 30), [p[0] for p in ISO_UPPER]])
    iso_mv = np.concatenate([zams_mv(iso_bv[:30]), [p[1] for p in ISO_UPPER]])
    turnoff = min(ISO_UPPER, key=lambda p: p[0])  # the bluest point of the evolved part
    return {"bv": np.concatenate([bv_ms, bv_g]), "v": np.concatenate([v_ms, v_g]), "iso_bv": iso_bv,
            "iso_v": iso_mv + CLUSTER_DM, "turnoff_v": turnoff[1] + CLUSTER_DM, "turnoff_bv": turnoff[0]}


def cmd_draw() -> Figure:
    d = cmd_data()
    fig = plt.figure(figsize=(5.6, 6.2))
    ax = fig.add_subplot(111)
    ax.scatter(d["bv"], d["v"], s=8, color="0.25", label="cluster members")
    ax.plot(d["iso_bv"], d["iso_v"], color="C3", lw=1.6, label=f"isochrone (1.5 Gyr), μ = {CLUSTER_DM:.1f}")
    ax.annotate("turn-off", (d["turnoff_bv"], d["turnoff_v"]), xytext=(0.12, 12.2), fontsize=10,
                arrowprops={"arrowstyle": "->", "color": "C0"}, color="C0")
    ax.set_xlim(0.0, 1.6)
    ax.set_ylim(20, 8)  # magnitudes: brighter is up
    ax.set_xlabel("B − V (mag)")
    ax.set_ylabel("V (mag)")
    ax.legend(loc="upper right", fontsize=9)
    ax.set_title("Colour–magnitude diagram of an open cluster")
    fig.tight_layout()
    return fig


# --- 14. Absorption-line fit with residuals (two panels) -----------------------------------------------------
NA_D = {"D2": (5889.95, 0.55), "D1": (5895.92, 0.45)}  # rest wavelength (Å), model depth
NA_SIGMA, NA_NOISE = 0.35, 0.01


def na_model(lam: np.ndarray) -> np.ndarray:
    """Continuum-normalised flux of the two Gaussian Na I D absorption lines."""
    f = np.ones_like(lam)
    for center, depth in NA_D.values():
        f = f - depth * np.exp(-0.5 * ((lam - center) / NA_SIGMA) ** 2)
    return f


def fitres_draw() -> Figure:
    rng = np.random.default_rng(1414)
    lam = np.arange(5884.0, 5902.0, 0.1)
    flux = na_model(lam) + rng.normal(0, NA_NOISE, lam.size)
    fig, (top, bot) = plt.subplots(2, 1, figsize=(6.6, 5.2), sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    top.step(lam, flux, where="mid", color="0.3", lw=0.8, label="observed")
    top.plot(lam, na_model(lam), color="C3", lw=1.4, label="two-Gaussian fit")
    top.set_ylim(0.3, 1.1)
    top.set_ylabel("Normalized flux")
    top.legend(loc="lower left", fontsize=9)
    top.set_title("Na I D absorption doublet")
    bot.axhspan(-NA_NOISE, NA_NOISE, color="C0", alpha=0.2)
    bot.plot(lam, flux - na_model(lam), ".", ms=2.5, color="k")
    bot.axhline(0, color="C3", lw=1)
    bot.set_ylim(-0.05, 0.05)
    bot.set_ylabel("Residual")
    bot.set_xlabel("Wavelength (Å)")
    bot.set_xlim(5884, 5902)
    fig.tight_layout()
    return fig


# --- 15. Redshift histogram ---------------------------------------------------------------------------------
Z_BINS = np.round(np.arange(0.0, 4.01, 0.1), 1)


def zhist_data() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1515)
    gal = rng.gamma(4.0, 0.15, 2500)  # mode (k-1)θ = 0.45
    qso = rng.normal(1.6, 0.7, 900)
    qso = qso[(qso > 0.1) & (qso < 4.0)]
    return {"galaxies": gal[gal < 4.0], "quasars": qso}


def zhist_draw() -> Figure:
    d = zhist_data()
    fig = plt.figure(figsize=(6.6, 4.4))
    ax = fig.add_subplot(111)
    ax.hist(d["galaxies"], bins=Z_BINS, color="C0", alpha=0.7, label=f"galaxies (N = {d['galaxies'].size})")
    ax.hist(d["quasars"], bins=Z_BINS, color="C1", alpha=0.7, label=f"quasars (N = {d['quasars'].size})")
    ax.set_xlim(0, 4)
    ax.set_xlabel("Spectroscopic redshift z")
    ax.set_ylabel("Number per Δz = 0.1")
    ax.legend()
    ax.set_title("Redshift distribution of a spectroscopic survey")
    fig.tight_layout()
    return fig


def histogram_peak(values: np.ndarray) -> float:
    """Centre of the fullest :data:`Z_BINS` bin."""
    counts, edges = np.histogram(values, bins=Z_BINS)
    i = int(np.argmax(counts))
    return float((edges[i] + edges[i + 1]) / 2)


# --- 16. All-sky map (Mollweide) ----------------------------------------------------------------------------
#: Rotation from Galactic (l, b) unit vectors to ICRS equatorial ones (Hipparcos/ICRS definition of the pole).
GAL_TO_EQ = np.array([[-0.0548755604, 0.4941094279, -0.8676661490],
                      [-0.8734370902, -0.4448296300, -0.1980763734],
                      [-0.4838350155, 0.7469822445, 0.4559837762]])


def galactic_to_radec(l_deg: np.ndarray, b_deg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(RA, Dec) in degrees of Galactic coordinates, RA in [0, 360)."""
    lr, br = np.radians(l_deg), np.radians(b_deg)
    xyz = np.stack([np.cos(br) * np.cos(lr), np.cos(br) * np.sin(lr), np.sin(br)])
    x, y, z = GAL_TO_EQ @ xyz
    return np.degrees(np.arctan2(y, x)) % 360, np.degrees(np.arcsin(np.clip(z, -1, 1)))


def skymap_data() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(1616)
    xrb = galactic_to_radec(rng.normal(0, 40, 220) % 360, rng.normal(0, 3, 220))  # concentrated to the disc
    agn = (rng.uniform(0, 360, 180), np.degrees(np.arcsin(rng.uniform(-1, 1, 180))))  # isotropic
    plane = galactic_to_radec(np.linspace(0, 360, 361), np.zeros(361))
    return {"xrb": xrb, "agn": agn, "plane": plane}


def _moll_x(ra_deg: np.ndarray) -> np.ndarray:
    # Astronomical convention: RA grows to the left, 12h at the centre.
    return np.radians(180.0 - ra_deg)


def skymap_draw() -> Figure:
    d = skymap_data()
    fig = plt.figure(figsize=(7.6, 4.6))
    ax = fig.add_subplot(111, projection="mollweide")
    ra, dec = d["plane"]
    order = np.argsort(_moll_x(ra))
    ax.plot(_moll_x(ra)[order], np.radians(dec)[order], color="0.5", lw=1, ls=":", label="Galactic plane")
    ax.scatter(_moll_x(d["xrb"][0]), np.radians(d["xrb"][1]), s=12, marker="^", color="C1",
               label="X-ray binaries")
    ax.scatter(_moll_x(d["agn"][0]), np.radians(d["agn"][1]), s=10, marker="o", color="C0", label="AGN")
    ticks = np.arange(-150, 151, 30)
    ax.set_xticks(np.radians(ticks))
    ax.set_xticklabels([f"{int(((180 - t) % 360) / 15)}h" for t in ticks], fontsize=8)
    ax.grid(alpha=0.4)
    ax.set_xlabel("Right ascension")
    ax.set_ylabel("Declination")
    ax.legend(loc="lower right", bbox_to_anchor=(1.05, -0.12), fontsize=8)
    ax.set_title("All-sky distribution of X-ray sources (equatorial coordinates)", pad=14)
    fig.tight_layout()
    return fig


# --- 17. Cosmic-ray all-particle spectrum --------------------------------------------------------------------
#: Broken power law dN/dE ∝ E^-γ: γ = 2.7 to the knee, 3.1 to the ankle, 2.6 above, suppression near 5×10^19 eV.
CR = {"knee_ev": 4e15, "ankle_ev": 5e18, "cut_ev": 5e19, "g1": 2.7, "g2": 3.1, "g3": 2.6, "norm": 1.0e4}


def cr_e26_flux(e: np.ndarray) -> np.ndarray:
    """E^2.6 × flux (arbitrary units normalised at 10^13 eV) of the broken power law."""
    e = np.asarray(e, dtype=float)
    f = np.where(e < CR["knee_ev"], (e / 1e13) ** -CR["g1"],
                 (CR["knee_ev"] / 1e13) ** -CR["g1"] * (e / CR["knee_ev"]) ** -CR["g2"])
    above = e >= CR["ankle_ev"]
    at_ankle = (CR["knee_ev"] / 1e13) ** -CR["g1"] * (CR["ankle_ev"] / CR["knee_ev"]) ** -CR["g2"]
    f = np.where(above, at_ankle * (e / CR["ankle_ev"]) ** -CR["g3"], f)
    f = f / (1 + (e / CR["cut_ev"]) ** 4)  # a smooth suppression at the highest energies
    return CR["norm"] * f * (e / 1e13) ** 2.6


def cosmicray_draw() -> Figure:
    rng = np.random.default_rng(1717)
    fig = plt.figure(figsize=(6.6, 4.8))
    ax = fig.add_subplot(111)
    for (lo, hi, n), name, marker, col in (((13, 15.2, 10), "direct (balloon/space)", "o", "C0"),
                                            ((14.8, 18.0, 14), "air-shower array", "s", "C2"),
                                            ((17.6, 20.2, 13), "fluorescence observatory", "^", "C3")):
        e = np.logspace(lo, hi, n)
        y = cr_e26_flux(e) * 10 ** rng.normal(0, 0.03, n)
        ax.errorbar(e, y, yerr=(0.08 + 0.05 * (np.log10(e) - 13) / 7) * y, fmt=marker, color=col, ms=4,
                    capsize=1.5, label=name)
    ee = np.logspace(13, 20.5, 400)
    ax.plot(ee, cr_e26_flux(ee), "k-", lw=1, label="broken power law")
    for key, label in (("knee_ev", "knee"), ("ankle_ev", "ankle")):
        ax.annotate(label, (CR[key], cr_e26_flux(np.array([CR[key]]))[0]), xytext=(0, 32),
                    textcoords="offset points", ha="center", arrowprops={"arrowstyle": "->"})
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(1e13, 1e21)
    ax.set_ylim(1e2, 3e4)
    ax.set_xlabel("Energy per particle (eV)")
    ax.set_ylabel(r"$E^{2.6}\,F(E)$ (arbitrary units)")
    ax.legend(loc="lower left", fontsize=8)
    ax.set_title("All-particle cosmic-ray spectrum")
    fig.tight_layout()
    return fig


# --- 18. CMB temperature power spectrum ---------------------------------------------------------------------
#: Toy model: Gaussian acoustic peaks at the Planck 2018 TT peak multipoles on a Sachs–Wolfe plateau.
CMB_PEAKS = ((220, 5720, 85), (537, 2590, 100), (813, 2540, 105), (1127, 1240, 120), (1425, 810, 125))


def cmb_dl(ell: np.ndarray) -> np.ndarray:
    """D_ℓ = ℓ(ℓ+1)C_ℓ/2π in μK² of the toy model."""
    ell = np.asarray(ell, dtype=float)
    d = 1000.0 * np.exp(-ell / 900.0) + 200.0 * np.exp(-ell / 2000.0)
    for center, amp, width in CMB_PEAKS:
        d = d + amp * np.exp(-0.5 * ((ell - center) / width) ** 2)
    return d


CMB_ELL = np.unique(np.round(np.logspace(np.log10(2), np.log10(2500), 1500)))


def cmb_draw() -> Figure:
    rng = np.random.default_rng(1818)
    fig = plt.figure(figsize=(6.8, 4.4))
    ax = fig.add_subplot(111)
    ell_b = np.unique(np.round(np.concatenate([np.arange(2, 30, 3), np.arange(30, 2500, 50)])))
    sigma = cmb_dl(ell_b) * (np.sqrt(2 / (2 * ell_b + 1)) / np.sqrt(np.where(ell_b < 30, 1, 50)) + 0.01)
    ax.errorbar(ell_b, cmb_dl(ell_b) + rng.normal(0, 1, ell_b.size) * sigma, yerr=sigma, fmt="o", ms=3,
                color="C3", ecolor="0.5", capsize=0, label="binned measurements")
    ax.plot(CMB_ELL, cmb_dl(CMB_ELL), color="k", lw=1.2, label="best-fit model")
    ax.set_xscale("log")
    ax.set_xlim(2, 2500)
    ax.set_ylim(0, 7500)
    ax.set_xlabel(r"Multipole $\ell$")
    ax.set_ylabel(r"$D_\ell^{TT}$ ($\mu$K$^2$)")
    ax.legend(loc="upper left")
    ax.set_title("CMB temperature power spectrum")
    fig.tight_layout()
    return fig


# --- the chart list -----------------------------------------------------------------------------------------
def charts() -> list[AstroChart]:
    """Charts 13–18 with their QA items (answers computed from the drawn data)."""
    cmd = cmd_data()
    z = zhist_data()
    z_peak = histogram_peak(z["galaxies"])
    deepest = max(NA_D.values(), key=lambda v: v[1])
    min_flux = float(na_model(np.array([deepest[0]]))[0])
    ell_peak = float(CMB_ELL[np.argmax(cmb_dl(CMB_ELL))])
    return [
        AstroChart("astro_cmd", "Open-cluster colour-magnitude diagram", ImageType.SCATTER,
                   SYNTHETIC + ": main sequence from a standard B−V/M_V dwarf calibration, schematic 1.5 Gyr "
                   f"isochrone, 15% binaries, distance modulus {CLUSTER_DM}", cmd_draw, [
                       AstroQA("point", "What is the apparent V magnitude of the point marked 'turn-off' on the "
                               "isochrone?", f"{cmd['turnoff_v']:.1f}", FQA, C.DATA, A.POINT, "numeric_retrieval",
                               (8, 20)),
                       AstroQA("kb", "Using the distance modulus given in the legend, how far away is the cluster, "
                               "in parsecs?", f"{10 ** (1 + CLUSTER_DM / 5):.0f}", AQA, C.KB_INFERENCE,
                               answer_kind="numeric_exact"),
                   ], {"distance_modulus": CLUSTER_DM, "turnoff_bv": cmd["turnoff_bv"],
                       "turnoff_v": cmd["turnoff_v"]}),
        AstroChart("astro_fitres", "Absorption-line fit with residuals", ImageType.LINE,
                   SYNTHETIC + ": Na I D2/D1 (5889.95/5895.92 Å) Gaussian absorption, depths 0.55/0.45, "
                   "noise σ = 0.01", fitres_draw, [
                       AstroQA("layout", "How is the figure laid out, and what does the lower panel show?",
                               "Two vertically stacked panels sharing the wavelength axis: a taller upper panel "
                               "with the spectrum and fit, and a short lower panel with the residuals (observed "
                               "minus fit) around zero.", FQA, C.VISUAL, A.LAYOUT,
                               key_points=("two panels stacked vertically", "shared wavelength x-axis",
                                           "upper panel taller: spectrum and fit", "lower panel: residuals")),
                       AstroQA("point", "What is the minimum normalized flux of the fitted model in the deeper of "
                               "the two lines?", f"{min_flux:.2f}", FQA, C.DATA, A.POINT, "numeric_retrieval",
                               (0.3, 1.1)),
                   ], {"lines": {k: list(v) for k, v in NA_D.items()}, "sigma_A": NA_SIGMA}),
        AstroChart("astro_zhist", "Redshift histogram", ImageType.BAR,
                   SYNTHETIC + ": galaxies z ~ Gamma(k = 4, θ = 0.15), quasars z ~ N(1.6, 0.7)", zhist_draw, [
                       AstroQA("point", "At what redshift (bin centre) does the galaxy histogram reach its "
                               "maximum?", f"{z_peak:.2f}", FQA, C.DATA, A.POINT, "numeric_retrieval", (0, 4)),
                       AstroQA("color", "Which population is drawn in orange: galaxies or quasars?", "quasars", FQA,
                               C.VISUAL, A.COLOR, "choice"),
                   ], {"n_galaxies": int(z["galaxies"].size), "n_quasars": int(z["quasars"].size),
                       "galaxy_peak_z": z_peak}),
        AstroChart("astro_skymap", "All-sky map of X-ray sources", ImageType.MAP,
                   SYNTHETIC + ": X-ray binaries drawn in Galactic coordinates (|b| ~ 3°), AGN isotropic; "
                   "Galactic→equatorial rotation of the ICRS definition; Mollweide projection", skymap_draw, [
                       AstroQA("style", "Which marker shape is used for the X-ray binaries, and which for the AGN?",
                               "X-ray binaries: triangles; AGN: circles.", FQA, C.VISUAL, A.STYLE,
                               key_points=("X-ray binaries are triangles", "AGN are circles")),
                       AstroQA("kb", "Why do the X-ray binaries follow the dotted curve while the AGN do not?",
                               "X-ray binaries are stellar systems in the Milky Way's thin disc, so they crowd along "
                               "the Galactic plane (the dotted curve, bent by the equatorial projection); AGN are "
                               "extragalactic and spread isotropically over the sky.", AQA, C.KB_INFERENCE,
                               key_points=("dotted curve is the Galactic plane", "X-ray binaries lie in the Milky "
                                           "Way disc", "AGN are extragalactic", "AGN are isotropic")),
                   ], {"n_xrb": 220, "n_agn": 180}),
        AstroChart("astro_cosmicray", "Cosmic-ray energy spectrum", ImageType.SCATTER,
                   SYNTHETIC + ": broken power law γ = 2.7/3.1/2.6 with knee 4×10^15 eV, ankle 5×10^18 eV and "
                   "a suppression near 5×10^19 eV (the measured all-particle spectrum's shape)", cosmicray_draw, [
                       AstroQA("point", "At what energy (eV) is the feature labelled 'knee'?", f"{CR['knee_ev']:.0e}",
                               FQA, C.DATA, A.POINT, "numeric_retrieval", (1e13, 1e21), True),
                       AstroQA("kb", "What is the suppression of the flux above about 5×10^19 eV usually "
                               "attributed to?", "The GZK effect: ultra-high-energy protons lose energy by pion "
                               "production on cosmic microwave background photons (or, alternatively, sources "
                               "reaching their maximum energy).", AQA, C.KB_INFERENCE,
                               key_points=("GZK cut-off", "interaction with CMB photons (pion production)",
                                           "or maximum energy of the sources")),
                   ], dict(CR)),
        AstroChart("astro_cmb", "CMB power spectrum", ImageType.LINE,
                   "toy model: Gaussian acoustic peaks at the Planck 2018 TT peak multipoles on a Sachs–Wolfe "
                   "plateau; synthetic binned points with cosmic-variance errors (fixed seed)", cmb_draw, [
                       AstroQA("point", "At what multipole ℓ does the model curve reach its highest peak?",
                               f"{ell_peak:.0f}", FQA, C.DATA, A.POINT, "numeric_retrieval", (2, 2500), True),
                       AstroQA("kb", "What does the position of the first acoustic peak tell us about the geometry "
                               "of the Universe?", "A first peak at ℓ ≈ 220 (an angular scale of about 1°) means "
                               "the Universe is spatially flat (total density close to critical).", AQA,
                               C.KB_INFERENCE, key_points=("first peak at ℓ ≈ 220 (~1 degree)", "spatially flat "
                                                           "geometry", "total density near the critical density")),
                   ], {"peaks": [list(p) for p in CMB_PEAKS], "model_peak_ell": ell_peak}),
    ]
