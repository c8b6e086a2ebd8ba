"""An independent model of which pages a non-aggressive VACUUM reads.

The model is the skip rule written down from its description, not from the
code: a run of pages that the visibility map lets VACUUM skip is skipped iff
it is at least `threshold` pages long; the last page of the table is always
read; a page that is not all-visible is always read.  Its input is the live
map (pgkit.tables.visibility_map()).
"""

from dataclasses import dataclass

STOCK_THRESHOLD = 32  # SKIP_PAGES_THRESHOLD in vacuumlazy.c


@dataclass
class Prediction:
    scanned: int          # pages VACUUM reads
    short_runs: int       # skippable pages read because their run was short
    skipped_allvis: bool  # skipped a run containing an all-visible, unfrozen page


def predict(vm, threshold_frozen, threshold_allvis=None, aggressive=False):
    """What a VACUUM with these thresholds reads.  An aggressive VACUUM
    (FREEZE, or relfrozenxid old enough) may skip only all-frozen pages."""
    if threshold_allvis is None:
        threshold_allvis = threshold_frozen
    n = len(vm)
    scanned = short = 0
    skipped_allvis = False
    block = 0
    while block < n:
        run_end = block
        has_allvis = False
        while vm[run_end][0] and run_end != n - 1:
            if not vm[run_end][1]:
                if aggressive:
                    break
                has_allvis = True
            run_end += 1
        run = run_end - block
        if run >= (threshold_allvis if has_allvis else threshold_frozen):
            skipped_allvis |= has_allvis and run > 0
        else:
            scanned += run
            short += run
        scanned += 1          # the unskippable page at run_end
        block = run_end + 1
    return Prediction(scanned, short, skipped_allvis)
