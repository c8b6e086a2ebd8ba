"""The report's figures: one PNG per server, I/O mode and storage profile,
one panel per workload: VACUUM time against the workload's fraction, one
line per threshold column."""

from bench.vacbench.stats import AUTO, AUTO_SETTINGS, thr_key

STYLES = {AUTO: dict(color="black", linewidth=2.5, linestyle="--"),
          AUTO_SETTINGS: dict(color="grey", linewidth=2, linestyle=":")}


def plot(med, group, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    keys = [k for k in med if k[:3] == group]
    workloads = sorted({k[3] for k in keys})
    fig, axes = plt.subplots(1, len(workloads), figsize=(5 * len(workloads), 4.2),
                             squeeze=False)
    for ax, w in zip(axes[0], workloads):
        thrs = sorted({k[5] for k in keys if k[3] == w}, key=thr_key)
        for t in thrs:
            pts = sorted((k[4], med[k][0]) for k in keys if k[3] == w and k[5] == t)
            label = {AUTO: "auto (calibrated)", AUTO_SETTINGS: "auto-settings"}.get(
                t, f"threshold {t}")
            ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", markersize=3,
                    label=label, **STYLES.get(t, {}))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(f"{w}: fraction")
        ax.set_ylabel("VACUUM time, ms (median)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
