"""The report's figures: one PNG per server, I/O mode and storage profile,
VACUUM time against the fraction of rows updated, one line per threshold."""

from bench.vacbench.stats import thr_key


def plot(med, group, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    thrs = sorted({k[4] for k in med if k[:3] == group}, key=thr_key)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for t in thrs:
        pts = sorted((k[3], v[0]) for k, v in med.items() if k[:3] == group and k[4] == t)
        style = dict(color="black", linewidth=2.5, linestyle="--") if t == "auto" else {}
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3,
                label=f"threshold {t}" if t != "auto" else "auto (-1)", **style)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("fraction of rows updated")
    ax.set_ylabel("VACUUM time, ms (median)")
    ax.set_title(title, fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
