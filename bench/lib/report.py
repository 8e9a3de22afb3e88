#!/usr/bin/env python3
"""Prints bench/run's aligned result table from its TSV files.

usage: report.py DIRS_TSV RESULTS_TSV [NOTES_TSV]

DIRS_TSV    one line per measured directory, in column order:
            label, kind (local | passthrough | glusterfs | fuse | other),
            path, statfs type (stat -f -c %T)
RESULTS_TSV header line, then: workload, label, metric, unit, value
            (value is a number, or FAIL / SKIP)
NOTES_TSV   optional: label, workload, note; a noted value gets a "*"
            and the note is listed under the table

The first table has the workloads' own metrics (rates): rows are
workloads in first-seen order; for each directory its value, then its
ratio to the first local directory ("/L", when the directory is not
that one), to the first FUSE passthrough ("/P", likewise) and to the
first GlusterFS directory ("/G", likewise). Higher is better for every
metric in it.

The second table has the cost rows (lib/procstat.py), for the
directories that have any: per op of the workload (the "per" column),
CPU microseconds of the mount's client + its servers ("cpu c+s"), FUSE
requests the client read ("req", Mortar only) and the client's peak RSS
in MiB ("MiB"). Lower is better; "-" is not measured, FAIL is a
workload that failed.
"""

import sys

# Metrics of the second table, in the order their cells are built.
COST_METRICS = ("cpu_client_us_per_op", "cpu_server_us_per_op",
                "fuse_req_per_op", "peak_rss_mib")


def read_tsv(path, skip_header=False):
    rows = []
    with open(path) as f:
        for n, line in enumerate(f):
            if skip_header and n == 0:
                continue
            line = line.rstrip("\n")
            if line:
                rows.append(line.split("\t"))
    return rows


def fmt_value(v):
    if v >= 1000:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    return "%.2f" % v


def as_number(s):
    try:
        v = float(s)
    except ValueError:
        return None
    return v if v == v else None  # NaN is not a result


def main(argv):
    if len(argv) not in (3, 4):
        sys.stderr.write(__doc__)
        return 2
    dirs = read_tsv(argv[1])
    results = read_tsv(argv[2], skip_header=True)
    notes = read_tsv(argv[3]) if len(argv) == 4 else []

    labels = [d[0] for d in dirs]
    kinds = {d[0]: d[1] for d in dirs}
    local_ref = next((lb for lb in labels if kinds[lb] == "local"), None)
    pt_ref = next((lb for lb in labels if kinds[lb] == "passthrough"), None)
    gfs_ref = next((lb for lb in labels if kinds[lb] == "glusterfs"), None)
    refs = [("L", local_ref), ("P", pt_ref), ("G", gfs_ref)]

    workloads, units, values, costs = [], {}, {}, {}
    for row in results:
        if len(row) < 5:
            continue
        wl, label, metric, unit, value = row[:5]
        if metric in COST_METRICS:
            costs[(wl, label, metric)] = (unit, value)
            continue
        if wl not in units:
            workloads.append(wl)
            units[wl] = unit
        values[(wl, label)] = value
    noted = {(n[0], n[1]): n[2] for n in notes if len(n) >= 3}

    header = ["workload", "unit"]
    for i, lb in enumerate(labels, 1):
        header.append("[%d]" % i)
        for tag, ref in refs:
            if ref and lb != ref:
                header.append("[%d]/%s" % (i, tag))

    table = [header]
    for wl in workloads:
        line = [wl, units[wl]]
        for lb in labels:
            raw = values.get((wl, lb), "-")
            v = as_number(raw)
            cell = fmt_value(v) if v is not None else raw
            if (lb, wl) in noted:
                cell += "*"
            line.append(cell)
            for _tag, ref in refs:
                if not ref or lb == ref:
                    continue
                r = as_number(values.get((wl, ref), ""))
                line.append("%.2fx" % (v / r) if v is not None and r
                            else "-")
        table.append(line)

    for i, lb in enumerate(labels, 1):
        tags = []
        if lb == local_ref:
            tags.append("L = local reference")
        if lb == pt_ref:
            tags.append("P = FUSE passthrough reference")
        if lb == gfs_ref:
            tags.append("G = GlusterFS reference")
        d = dirs[i - 1] + ["", ""]
        print("[%d] %s  %s  statfs=%s%s" % (
            i, lb, d[2], d[3] or "?",
            ("  (" + ", ".join(tags) + ")") if tags else ""))
    print()
    print_table(table)
    if noted:
        print()
        for (lb, wl), note in sorted(noted.items()):
            print("* [%d] %s: %s" % (labels.index(lb) + 1 if lb in labels
                                     else 0, wl, note))
    if costs:
        print()
        print_costs(labels, workloads, values, costs)
    return 0


def print_table(table):
    widths = [max(len(row[c]) for row in table) for c in range(len(table[0]))]
    for row in table:
        cells = [row[0].ljust(widths[0]), row[1].ljust(widths[1])]
        cells += [row[c].rjust(widths[c]) for c in range(2, len(row))]
        print("  ".join(cells).rstrip())


def fmt_cost(raw):
    v = as_number(raw)
    if v is None:
        return raw
    return "%.0f" % v if v >= 100 else fmt_value(v)


def cost(costs, wl, lb, metric):
    return costs.get((wl, lb, metric), ("", "-"))[1]


def print_costs(labels, workloads, values, costs):
    """Second table: per-op CPU (client+server), FUSE requests, RSS."""
    have = {(lb, m) for (_wl, lb, m) in costs}
    cols = []  # (label index, label, what)
    for i, lb in enumerate(labels, 1):
        if (lb, "cpu_client_us_per_op") in have:
            cols.append((i, lb, "cpu"))
        if (lb, "fuse_req_per_op") in have:
            cols.append((i, lb, "req"))
        if (lb, "peak_rss_mib") in have:
            cols.append((i, lb, "MiB"))
    header = ["workload", "per"]
    header += ["[%d] %s" % (i, "cpu c+s" if what == "cpu" else what)
               for i, _lb, what in cols]
    table = [header]
    for wl in workloads:
        per = next((u.split("/", 1)[-1]
                    for (w, _lb, m), (u, _v) in costs.items()
                    if w == wl and m != "peak_rss_mib"), "")
        line = [wl, per]
        for _i, lb, what in cols:
            if values.get((wl, lb)) == "FAIL":
                line.append("FAIL")
                continue
            if what == "cpu":
                c = cost(costs, wl, lb, "cpu_client_us_per_op")
                s = cost(costs, wl, lb, "cpu_server_us_per_op")
                line.append(fmt_cost(c) if s == "-"
                            else "%s+%s" % (fmt_cost(c), fmt_cost(s)))
            elif what == "req":
                line.append(fmt_cost(cost(costs, wl, lb, "fuse_req_per_op")))
            else:
                line.append(fmt_cost(cost(costs, wl, lb, "peak_rss_mib")))
        table.append(line)
    print("Cost per op of each mount's processes: CPU microseconds of the"
          " client + its servers")
    print("(c+s; a lone number: the client, no server process), FUSE"
          " requests the client")
    print("read (req), the client's peak RSS (MiB). Lower is better.")
    none = [str(i) for i, lb in enumerate(labels, 1)
            if not any(lb == c[1] for c in cols)]
    if none:
        print("No process measured for [%s] (local: kernel only)." %
              "], [".join(none))
    print()
    print_table(table)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
