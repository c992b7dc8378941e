#!/usr/bin/env python3
"""check_stats.py STATS SCHEMA [--records N] [--flows K] [--nodes M]
                [--gd-bytes B] [--work-records R]

A River stats file (doc/stats.md) against its JSON Schema, and its
totals against themselves: on every edge, what the producers sent is
what the consumers got (records and messages), and each producer's
messages to each consumer add up to what it sent (on a PULL edge, each
producer that sent records had at least one unit and at most its
messages taken, by consumers that name every producer); every stage has
one instance per rank it runs on. With --records, every flow's first stage
put out N records and its last stage took N in; --flows and --nodes
check how many flows and nodes it names. Every instance's series has
columns of one length, times and counts that never go back, and a last
row equal to the instance's totals; the edges' and --records' sums are
checked only in flows that succeeded. GD's entries: each disk's blocks
and bytes are its rows' sums, and each client was served at least the
bytes it received (a block withdrawn in the end game is never sent;
one read again after a failure may be); with --gd-bytes B every GD
entry's clients received B bytes in all. Work entries (gen, copy-in,
fsck) name every rank once; with --work-records R each adds up to R
records. Exit 0 if all holds, else 1
with what did not, one line each. A flow's own GD entries (a stage's
read, river_ctx_keep_gd) are checked as the command's are, without
--gd-bytes."""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("check_stats: python3-jsonschema is missing "
          "(scripts/install-deps installs it)")
    sys.exit(99)


COUNTS = ("records_in", "bytes_in", "records_out", "bytes_out")
WAITS = ("get_wait_seconds", "put_wait_seconds")


def check_series(flow, stage, inst):
    """An instance's series against itself and its totals."""
    where = "%s: stage %s instance %d" % (flow, stage, inst["instance"])
    se = inst["series"]
    n = len(se["t"])
    if any(len(se[c]) != n for c in COUNTS + WAITS):
        return ["%s: series columns of different lengths" % where]
    bad = []
    for c in ("t",) + COUNTS + WAITS:
        if any(b < a for a, b in zip(se[c], se[c][1:])):
            bad.append("%s: series %s goes back" % (where, c))
    for c in COUNTS:
        if se[c][-1] != inst[c]:
            bad.append("%s: series ends at %s %d, the total is %d"
                       % (where, c, se[c][-1], inst[c]))
    for c in WAITS:
        if abs(se[c][-1] - inst[c]) > 1e-9:
            bad.append("%s: series ends at %s %g, the total is %g"
                       % (where, c, se[c][-1], inst[c]))
    return bad


def check_units(where, e):
    """A PULL edge's units: every consumer names the producers in order;
    a producer that sent records had at least one unit taken, and no
    more than its messages (a unit is never empty)."""
    bad = []
    prods = [p["rank"] for p in e["producers"]]
    taken = dict.fromkeys(prods, 0)
    for c in e["consumers"]:
        if [u["rank"] for u in c.get("units_from", [])] != prods:
            bad.append("%s: consumer %d's units_from names %s, the "
                       "producers are %s" % (where, c["rank"],
                                             [u["rank"] for u in
                                              c.get("units_from", [])],
                                             prods))
            continue
        for u in c["units_from"]:
            taken[u["rank"]] += u["units"]
    for p in e["producers"]:
        if (p["records_out"] > 0) != (taken[p["rank"]] > 0) \
                or taken[p["rank"]] > p["messages_out"]:
            bad.append("%s: producer %d: %d units taken of %d messages "
                       "(%d records)" % (where, p["rank"], taken[p["rank"]],
                                         p["messages_out"],
                                         p["records_out"]))
    return bad


def check_gd(g, opts, flow=""):
    """A GD entry's sums (flow: the flow's name, for one of its
    stages')."""
    where = "%sgd %s" % (flow, g.get("label", "?"))
    bad = []
    to = {}
    for d in g["disks"]:
        for c in ("blocks", "bytes"):
            if sum(s[c] for s in d["served"]) != d[c + "_served"]:
                bad.append("%s: disk %d's %s_served is not its rows' sum"
                           % (where, d["disk"], c))
        for s in d["served"]:
            to[s["client"]] = to.get(s["client"], 0) + s["bytes"]
    for c in g["clients"]:
        if to.get(c["rank"], 0) < c["bytes_received"]:
            bad.append("%s: rank %d received %d bytes, was served %d"
                       % (where, c["rank"], c["bytes_received"],
                          to.get(c["rank"], 0)))
    got = sum(c["bytes_received"] for c in g["clients"])
    if "--gd-bytes" in opts and got != int(opts["--gd-bytes"]):
        bad.append("%s: %d bytes received, not %s"
                   % (where, got, opts["--gd-bytes"]))
    return bad


def main(argv):
    path, schema_path = argv[1], argv[2]
    opts = dict(zip(argv[3::2], argv[4::2]))
    with open(path) as f:
        doc = json.load(f)
    with open(schema_path) as f:
        schema = json.load(f)
    bad = []
    try:
        jsonschema.validate(doc, schema)
    except jsonschema.ValidationError as e:
        bad.append("schema: %s at %s" % (e.message, list(e.absolute_path)))
        return bad
    job = doc["job"]
    if len(job["rank_node"]) != job["ranks"]:
        bad.append("rank_node has %d entries for %d ranks"
                   % (len(job["rank_node"]), job["ranks"]))
    if any(k >= len(job["nodes"]) for k in job["rank_node"]):
        bad.append("rank_node names a node not in nodes")
    if "--nodes" in opts and len(job["nodes"]) != int(opts["--nodes"]):
        bad.append("%d nodes, not %s" % (len(job["nodes"]), opts["--nodes"]))
    if "--flows" in opts and len(doc["flows"]) != int(opts["--flows"]):
        bad.append("%d flows, not %s" % (len(doc["flows"]), opts["--flows"]))
    for g in doc.get("gd", []):
        bad += check_gd(g, opts)
    for w in doc.get("work", []):
        ranks = sorted(r["rank"] for r in w["ranks"])
        if ranks != list(range(job["ranks"])):
            bad.append("work %s: ranks %s" % (w.get("label", "?"), ranks))
        got = sum(r["records"] for r in w["ranks"])
        if "--work-records" in opts and got != int(opts["--work-records"]):
            bad.append("work %s: %d records, not %s"
                       % (w.get("label", "?"), got, opts["--work-records"]))
    for fl in doc["flows"]:
        name = fl.get("label", "?")
        for g in fl.get("gd", []):
            bad += check_gd(g, {}, name + ": ")
        for st in fl["stages"]:
            for i in st["instances"]:
                bad += check_series(name, st["name"], i)
            got = sorted(i["rank"] for i in st["instances"])
            if got != sorted(st["ranks"]):
                bad.append("%s: stage %s has instances on %s, ranks %s"
                           % (name, st["name"], got, st["ranks"]))
        if fl["outcome"] != "RIVER_SUCCESS":
            continue   # a failed flow's records may be anywhere
        for e in fl["edges"]:
            where = "%s: edge %s -> %s" % (name, e["from"], e["to"])
            out = sum(p["records_out"] for p in e["producers"])
            inn = sum(c["records_in"] for c in e["consumers"])
            mout = sum(p["messages_out"] for p in e["producers"])
            min_ = sum(c["messages_in"] for c in e["consumers"])
            # A broadcast edge delivers each record put to every
            # consumer; its messages are counted once per consumer.
            k = len(e["consumers"]) if e["kind"] == "broadcast" else 1
            if out * k != inn:
                bad.append("%s: %d records sent, %d got" % (where, out, inn))
            if mout != min_:
                bad.append("%s: %d messages sent, %d got"
                           % (where, mout, min_))
            if e["kind"] == "dq pull":
                bad += check_units(where, e)
            for p in e["producers"]:
                to = sum(m["messages"] for m in p["messages_to"])
                if [m["rank"] for m in p["messages_to"]] != \
                        [c["rank"] for c in e["consumers"]]:
                    bad.append("%s: rank %d's messages_to names ranks %s, "
                               "the consumers are %s"
                               % (where, p["rank"],
                                  [m["rank"] for m in p["messages_to"]],
                                  [c["rank"] for c in e["consumers"]]))
                if to != p["messages_out"]:
                    bad.append("%s: rank %d sent %d messages, %d by "
                               "consumer" % (where, p["rank"],
                                             p["messages_out"], to))
        if "--records" in opts:
            n = int(opts["--records"])
            first, last = fl["stages"][0], fl["stages"][-1]
            put = sum(i["records_out"] for i in first["instances"])
            took = sum(i["records_in"] for i in last["instances"])
            if put != n or took != n:
                bad.append("%s: stage %s put out %d, stage %s took in %d, "
                           "not %d" % (name, first["name"], put,
                                       last["name"], took, n))
    return bad


if __name__ == "__main__":
    if len(sys.argv) < 3:
        print(__doc__)
        sys.exit(2)
    problems = main(sys.argv)
    for p in problems:
        print("check_stats: " + p)
    sys.exit(1 if problems else 0)
