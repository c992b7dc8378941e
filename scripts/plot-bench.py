#!/usr/bin/env python3
"""plot-bench.py - plot a river-bench CSV to a PNG.

    scripts/plot-bench.py dq-read.csv [-o dq-read.png]

Works for every suite (a gd CSV has a finish_spread column). Sweeps over
k perturbed (dq/gd read and write, sort partitioners and writers, join
perturb) plot the ratio to the fluid ideal against k, one line per
policy, the median where a point was repeated; scaling (and gd's
scaling-seek rows in the same file) plots MB/s against n with the
ideal; overhead plots MB/s against message size for river and raw MPI.
Needs Python 3 and matplotlib (Debian: python3-matplotlib).
"""
import argparse
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if v else 0.0


def load(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def by_policy(rows):
    out = {}
    for r in rows:
        key = r["policy"]
        if r["experiment"] != rows[0]["experiment"]:
            key = "%s (%s)" % (key, r["experiment"])
        out.setdefault(key, []).append(r)
    return out


def plot(rows, out, title):
    exp = rows[0]["experiment"]
    gd = "finish_spread" in rows[0]
    suite = "gd" if gd else "dq"
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    groups = by_policy(rows)
    targets = {"read": 95, "write": 95, "partitioners": 90, "writers": 90}
    if exp in ("read", "write", "partitioners", "writers", "perturb"):
        for pol, rs in groups.items():
            ks = sorted({int(r["k_perturbed"]) for r in rs})
            ax.plot(ks, [100 * median([float(r["ratio"]) for r in rs
                                       if int(r["k_perturbed"]) == k])
                         for k in ks], marker="o", label=pol)
        if exp in targets:
            ax.axhline(targets[exp], color="grey", linestyle=":",
                       label="target %d%%" % targets[exp])
        ax.set_xlabel({"partitioners": "partitioners at 25% k",
                       "writers": "disks at 50% k",
                       "perturb": "joiners at 25% k"}.get(
                           exp, "perturbed disks k" if gd
                           else "perturbed consumers k"))
        ax.set_ylabel("% of fluid ideal")
        ax.set_ylim(0, 110)
    elif exp == "scaling":
        for pol, rs in groups.items():
            ns = sorted({int(r["n_producers"]) for r in rs})
            ax.plot(ns, [median([float(r["measured_MBps"]) for r in rs
                                 if int(r["n_producers"]) == n])
                         for n in ns], marker="o", label=pol)
        rs = next(iter(groups.values()))
        ax.plot([int(r["n_producers"]) for r in rs],
                [float(r["ideal_MBps"]) for r in rs], "k--", label="ideal")
        ax.set_xlabel("disks = clients n" if gd
                      else "producers = consumers n")
        ax.set_ylabel("MB/s")
    elif exp == "overhead":
        for pol, rs in groups.items():
            for n in sorted({r["n_producers"] for r in rs}):
                sel = [r for r in rs if r["n_producers"] == n]
                ax.plot([float(r["factor"]) for r in sel],
                        [float(r["measured_MBps"]) for r in sel], marker="o",
                        label="%s %sx%s" % (pol, n, n))
        ax.set_xscale("log", base=2)
        ax.set_xlabel("message size (KiB)")
        ax.set_ylabel("MB/s")
    else:
        print("plot-bench: nothing to plot for experiment %s" % exp,
              file=sys.stderr)
        return 1
    if exp in ("partitioners", "writers"):
        suite = "sort"
    elif exp == "perturb":
        suite = "join"
    ax.set_title(title or "river-bench %s %s" % (suite, exp))
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("-o", "--output")
    ap.add_argument("--title")
    a = ap.parse_args()
    rows = load(a.csv)
    if not rows:
        print("plot-bench: %s has no rows" % a.csv, file=sys.stderr)
        return 1
    out = a.output or a.csv.rsplit(".", 1)[0] + ".png"
    return plot(rows, out, a.title)


if __name__ == "__main__":
    sys.exit(main())
