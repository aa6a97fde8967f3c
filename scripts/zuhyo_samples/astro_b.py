"""``sample-astro`` charts 6–12: rotation curves, emission-line spectrum, luminosity function, SN Ia light
curves, radial velocities, the initial mass function and a periodogram (synthetic models, fixed seeds)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

# --- 6. Rotation curves (2x2) ------------------------------------------------------------------------------
GALAXIES = (("NGC A", 210, 3.0), ("NGC B", 160, 2.0), ("NGC C", 120, 1.5), ("NGC D", 250, 4.0))


def rotation_draw() -> Figure:
    rng = np.random.default_rng(606)
    fig, axes = plt.subplots(2, 2, figsize=(7.0, 5.6), sharex=True)
    r = np.linspace(1, 30, 18)
    for ax, (name, vflat, rs) in zip(axes.flat, GALAXIES, strict=True):
        v = vflat * (1 - np.exp(-r / rs)) + rng.normal(0, 6, r.size)
        ax.errorbar(r, v, yerr=8, fmt="o", ms=3, color="k", capsize=1.5, label="observed")
        kep = np.where(r < 2 * rs, vflat * (1 - np.exp(-r / rs)), vflat * (1 - np.exp(-2)) * np.sqrt(2 * rs / r))
        ax.plot(r, kep, "C0--", label="visible mass only")
        ax.set_title(name, fontsize=10)
        ax.set_ylim(0, 300)
    for ax in axes[1]:
        ax.set_xlabel("Radius (kpc)")
    for ax in axes[:, 0]:
        ax.set_ylabel("Rotation velocity (km s$^{-1}$)")
    axes[0, 0].legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


# --- 7. Emission-line spectrum -----------------------------------------------------------------------------
LINES = {"Hβ 4861": (4861.3, 1.0), "[O III] 4959": (4958.9, 1.0), "[O III] 5007": (5006.8, 3.0),
         "Hα 6563": (6562.8, 2.8), "[N II] 6583": (6583.5, 0.9)}


def spectrum_draw() -> Figure:
    rng = np.random.default_rng(707)
    lam = np.linspace(4000, 7000, 3001)
    flux = 1.0 + 0.00005 * (lam - 4000)
    for center, amp in LINES.values():
        flux = flux + amp * np.exp(-0.5 * ((lam - center) / 4.0) ** 2)
    flux = flux + rng.normal(0, 0.03, lam.size)
    fig = plt.figure(figsize=(7.2, 4.2))
    ax = fig.add_subplot(111)
    ax.plot(lam, flux, color="k", lw=0.7)
    ax.set_xlim(4000, 7000)
    ax.set_xlabel("Rest wavelength (Å)")
    ax.set_ylabel(r"$F_\lambda$ (arbitrary units)")
    ax.set_title("Optical spectrum of an emission-line galaxy")
    fig.tight_layout()
    return fig


# --- 8. Schechter luminosity function ----------------------------------------------------------------------
SCHECHTER = {"phi_star": 1.49e-2, "m_star": -20.44, "alpha": -1.05}


def schechter(m: np.ndarray | float) -> np.ndarray:
    """Schechter function in absolute magnitudes, Φ(M) dM (Mpc^-3 mag^-1)."""
    x = 10 ** (0.4 * (SCHECHTER["m_star"] - np.asarray(m, dtype=float)))
    return 0.4 * np.log(10) * SCHECHTER["phi_star"] * x ** (SCHECHTER["alpha"] + 1) * np.exp(-x)


def lf_draw() -> Figure:
    rng = np.random.default_rng(808)
    m = np.arange(-23.5, -15.9, 0.5)
    phi = schechter(m) * 10 ** rng.normal(0, 0.05, m.size)
    fig = plt.figure(figsize=(6.4, 4.6))
    ax = fig.add_subplot(111)
    ax.errorbar(m, phi, yerr=0.2 * phi, fmt="s", color="C2", ms=4, capsize=2, label="survey counts")
    mm = np.linspace(-24, -16, 300)
    ax.plot(mm, schechter(mm), "k-", label="Schechter fit")
    ax.set_yscale("log")
    ax.set_xlim(-24, -16)
    ax.set_ylim(1e-6, 1e-1)
    ax.set_xlabel(r"$M_r - 5\log_{10} h$")
    ax.set_ylabel(r"$\Phi$ ($h^3$ Mpc$^{-3}$ mag$^{-1}$)")
    ax.grid(which="both", alpha=0.25)
    ax.legend(loc="lower right")
    ax.set_title("Galaxy luminosity function")
    fig.tight_layout()
    return fig


# --- 9. SN Ia light curves ---------------------------------------------------------------------------------
SN = {"peak_b": -19.30, "dm15": 1.10, "peak_v": -19.25}


def sn_mag(t: np.ndarray, peak: float, dm15: float) -> np.ndarray:
    """A smooth SN Ia-like light curve: parabolic rise, linear-in-time decline fixed by Δm15."""
    t = np.asarray(t, dtype=float)
    rise = peak + 0.012 * t**2
    decline = peak + dm15 * (t / 15.0) - 0.006 * t * np.clip(t - 15.0, 0, None)
    return np.where(t < 0, rise, decline)


def sn_draw() -> Figure:
    rng = np.random.default_rng(909)
    t = np.arange(-10, 41, 2.5)
    fig = plt.figure(figsize=(6.4, 4.6))
    ax = fig.add_subplot(111)
    for band, col, peak, dm in (("B", "blue", SN["peak_b"], SN["dm15"]), ("V", "green", SN["peak_v"], 0.65)):
        ax.errorbar(t, sn_mag(t, peak, dm) + rng.normal(0, 0.03, t.size), yerr=0.05, fmt="o", color=col, ms=4,
                    capsize=1.5, label=f"{band} band")
    for tt in (0, 15):
        mb = float(sn_mag(np.array([tt]), SN["peak_b"], SN["dm15"])[0])
        ax.annotate(f"B = {mb:.2f}", (tt, mb), textcoords="offset points", xytext=(10, -14), fontsize=9,
                    arrowprops={"arrowstyle": "->", "color": "0.3"})
    ax.invert_yaxis()
    ax.set_xlabel("Days since B-band maximum")
    ax.set_ylabel("Absolute magnitude")
    ax.legend()
    ax.set_title("Type Ia supernova light curves")
    fig.tight_layout()
    return fig


# --- 10. Radial velocity curve (51 Peg b parameters) -------------------------------------------------------
RV = {"k": 55.9, "period_d": 4.2308}


def rv_draw() -> Figure:
    rng = np.random.default_rng(1010)
    phase = np.sort(rng.uniform(0, 1, 40))
    v = -RV["k"] * np.sin(2 * np.pi * phase) + rng.normal(0, 5, phase.size)
    fig = plt.figure(figsize=(6.4, 4.4))
    ax = fig.add_subplot(111)
    ax.errorbar(phase, v, yerr=5, fmt="o", color="k", ms=4, capsize=2)
    p = np.linspace(0, 1, 400)
    ax.plot(p, -RV["k"] * np.sin(2 * np.pi * p), color="C1", lw=2, label=f"Keplerian fit, P = {RV['period_d']} d")
    ax.set_xlim(0, 1)
    ax.set_ylim(-100, 100)
    ax.set_xlabel("Orbital phase")
    ax.set_ylabel("Radial velocity (m s$^{-1}$)")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right")
    ax.set_title("Radial-velocity curve of a Sun-like star")
    fig.tight_layout()
    return fig


# --- 11. Initial mass function -----------------------------------------------------------------------------
SALPETER_SLOPE = -2.35


def kroupa(m: np.ndarray) -> np.ndarray:
    """Kroupa (2001) broken power law, normalised to match the Salpeter line at 1 M_sun."""
    return np.where(m < 0.5, 1000 * 0.5 ** (-2.3) * (m / 0.5) ** (-1.3), 1000 * m ** (-2.3))


def imf_draw() -> Figure:
    fig = plt.figure(figsize=(6.4, 4.6))
    ax = fig.add_subplot(111)
    m = np.logspace(-1, 2, 200)
    ax.loglog(m, 1000 * m**SALPETER_SLOPE, "k-", lw=2, label="Salpeter (1955)")
    ax.loglog(m, kroupa(m), "C0--", lw=2, label="Kroupa (2001)")
    for mm in (1.0, 10.0):
        n = 1000 * mm**SALPETER_SLOPE
        ax.plot([mm], [n], "ko")
        ax.annotate(f"({mm:g}, {n:.3g})", (mm, n), textcoords="offset points", xytext=(8, 6), fontsize=9)
    ax.set_xlabel(r"Stellar mass ($M_\odot$)")
    ax.set_ylabel(r"$dN/dM$ (arbitrary normalisation)")
    ax.legend()
    ax.set_title("Initial mass function")
    fig.tight_layout()
    return fig


# --- 12. Periodogram (RR Lyrae-like) -----------------------------------------------------------------------
F1 = 1.7637  # cycles/day (RR Lyrae itself: P = 0.56684 d)


def periodogram_draw() -> Figure:
    rng = np.random.default_rng(1212)
    f = np.linspace(0.05, 10, 2000)
    power = 0.02 * rng.random(f.size)
    for k, amp in ((1, 1.0), (2, 0.45), (3, 0.22), (4, 0.1)):
        power = power + amp * np.sinc((f - k * F1) / 0.05) ** 2
    fig = plt.figure(figsize=(7.0, 4.2))
    ax = fig.add_subplot(111)
    ax.plot(f, power, color="purple", lw=0.8)
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 1.1)
    ax.set_xlabel("Frequency (cycles day$^{-1}$)")
    ax.set_ylabel("Normalized power")
    ax.set_title("Lomb–Scargle periodogram")
    fig.tight_layout()
    return fig
