#!/usr/bin/env python3
"""Turns the JMH JSON of `benchmarks/run durable` (JobTableBench, SettlementBench) into
benchmarks/results/durable.md (printed on stdout).

    python3 benchmarks/durable_report.py --meta results/durable-meta.json \
        results/durable-jobtable.json results/durable-settlement.json > results/durable.md

Standard library only, deterministic, and in the same form as report.py (whose helpers it uses):
every figure raw and as a ratio to its baseline in the same run, the per-fork means beside the
figures that decide a target, and each target judged from the wall-clock figures.
"""

import argparse
import json
import statistics
import sys

import report
from report import find, fmt_ratio, ratio, sig, table

DIALECTS = ["POSTGRES", "H2"]
CLAIM_BATCHES = ["1", "16", "64"]
DEFAULT_CLAIM_BATCH = "64"
# Issue 21's targets: jobs/s through the embedded default at W = 16 with a 1 ms handler; the pool
# against the plain loop at W = 1; the settlement hook's cost on the in-memory pool at 1 ms.
JOBS_TARGET = 5000
# Issue 41's: the same figure, ≥ 10,000 jobs/s, or the ceiling the machine's CPU sets, shown by where it went.
QUEUE_JOBS_TARGET = 10000
# A machine whose cores are this busy, in a run whose 1 ms figure is this close to its no-op figure, is at its ceiling.
SATURATED = 0.9
PLAIN_W1_TARGET = 0.9
HOOK_SLEEP_TARGET = 1.10


def secondary(result, name):
    """(score, per-fork means) of a secondary metric, or (None, [])."""
    metric = (result.entry.get("secondaryMetrics") or {}).get(name) if result else None
    if not metric:
        return None, []
    forks = [statistics.mean(fork) for fork in metric.get("rawData") or [] if fork]
    return float(metric["score"]), forks


def forks_text(forks, unit=""):
    return " / ".join(sig(f) for f in forks) + unit if forks else "–"


def jobtable_section(results):
    rows = []
    for dialect in DIALECTS:
        for handler in ["1ms", "noop"]:
            for workers in ["1", "16"]:
                plain, _ = secondary(find(results, "JobTableBench.plainLoop", dialect=dialect, handler=handler,
                                          workers=workers), "jobs")
                if plain is None:
                    continue
                cells = [dialect, handler, workers, sig(plain)]
                for batch in CLAIM_BATCHES:
                    pool, _ = secondary(find(results, "JobTableBench.pool", dialect=dialect, handler=handler,
                                             workers=workers, claimBatch=batch), "jobs")
                    cells.append(f"{sig(pool)} ({fmt_ratio(ratio(pool, plain))})" if pool is not None else "–")
                rows.append(cells)
    if not rows:
        return ""
    return ("## Jobs through a job table\n\n"
            "`JobTableBench`: each invocation drains a fresh table of 300 × W jobs (made before it, dropped after "
            "it, neither measured) and checks that every job is `done`. **pool**: a `WorkerPool` of W over "
            "`JobTable.claims()` with `JobTable.settler()`, claims of 1, 16 or 64 rows (the default, decision 0041), settlements "
            "in batches of 64, queue intake of max(W, claim batch). **plain loop**: W platform threads, each with a "
            "connection of its own, each claiming one row (the same `SELECT … FOR UPDATE SKIP LOCKED`, then an "
            "`UPDATE` to `running`, one transaction), handling it, and acknowledging it (the same fenced `UPDATE` "
            "to `done`, a second transaction). The handler sleeps 1 ms or returns at once (`noop`: the ceiling of "
            "the engine and the adapter on this machine). POSTGRES is the embedded default (`LocalPostgres`, a "
            "real PostgreSQL 14 started from Maven jars, sharing the 2 cores with the benchmark's JVM), H2 a file "
            "database in the benchmark's JVM. Jobs per second, and in brackets the ratio to the plain loop in the "
            "same run (above 1 is faster here).\n\n"
            + table(["dialect", "handler", "W", "plain loop jobs/s", "pool, claims of 1", "claims of 16",
                     "claims of 64 (the default)"], rows, ["l", "l", "r", "r", "r", "r", "r"]))


def settlement_section(results):
    rows = []
    for handler, bench in [("1 ms sleep", "SettlementBench.sleep1ms"), ("no-op", "SettlementBench.noop")]:
        for workers in ["8", "64"]:
            none = find(results, bench, settler="none", workers=workers)
            counting = find(results, bench, settler="counting", workers=workers)
            if none is None or counting is None:
                continue
            if bench.endswith("sleep1ms"):
                a, fa = secondary(none, "items")
                b, fb = secondary(counting, "items")
            else:
                a, fa = none.score, [statistics.mean(f) for f in none.entry["primaryMetric"].get("rawData") or []]
                b, fb = counting.score, [statistics.mean(f) for f in counting.entry["primaryMetric"].get("rawData") or []]
            rows.append([handler, workers, sig(a), forks_text(fa), sig(b), forks_text(fb), fmt_ratio(ratio(b, a)),
                         sig(none.cpu_per_op), sig(counting.cpu_per_op)])
    if not rows:
        return ""
    return ("## The settlement hook on the in-memory pool\n\n"
            "`SettlementBench`: `PoolBench`'s runs (queue intake, queue size 16, a 30 s item timeout), without a "
            "metrics sink, with no settler or with one that only counts what it is given (the hook's own cost: "
            "the ledger offers every fate, the settler thread batches them by 64, workers wait while four batches "
            "are outstanding, the run's end waits for the last). Time per item (ns), each fork's mean, the ratio "
            "(above 1 is slower), and the CPU time per item (ns) of the whole JVM.\n\n"
            + table(["handler", "workers", "no settler", "its forks", "counting settler", "its forks", "ratio",
                     "CPU, none", "CPU, counting"], rows, ["l", "r", "r", "r", "r", "r", "r", "r", "r"]))


def machine_cores(meta):
    """The machine's cores, from the meta JSON that benchmarks/run writes (None if it does not say)."""
    cores = meta.get("cores")
    return int(cores) if cores else None


def cpu_split(result, jobs):
    """(machine, jvm, postgres, others) cores of MachineCpuProfiler, or None."""
    names = ["cpu.machine", "cpu.jvm", "cpu.postgres", "cpu.others"]
    cores = [secondary(result, name)[0] for name in names]
    if jobs is None or any(c is None for c in cores):
        return None
    return cores


def micros_per_job(cores, jobs):
    return f"{cores / jobs * 1e6:,.0f}" if jobs else "–"


def cpu_section(results, cores_of_machine):
    rows = []
    for dialect in DIALECTS:
        for handler in ["1ms", "noop"]:
            for workers in ["1", "16"]:
                for what, result in [
                        ("plain loop", find(results, "JobTableBench.plainLoop", dialect=dialect, handler=handler, workers=workers)),
                        (f"pool, claims of {DEFAULT_CLAIM_BATCH}", find(results, "JobTableBench.pool", dialect=dialect,
                                                                       handler=handler, workers=workers,
                                                                       claimBatch=DEFAULT_CLAIM_BATCH))]:
                    jobs, _ = secondary(result, "jobs")
                    split = cpu_split(result, jobs)
                    if split is None:
                        continue
                    machine, jvm, postgres, others = split
                    rows.append([dialect, handler, workers, what, sig(jobs), f"{machine:.2f} of {cores_of_machine}",
                                 f"{jvm:.2f}", f"{postgres:.2f}", f"{others:.2f}", micros_per_job(jvm, jobs),
                                 micros_per_job(postgres, jobs)])
    if not rows:
        return ""
    return ("## Where the CPU goes\n\n"
            "`-prof dev.drain.bench.MachineCpuProfiler` on `JobTableBench`: during each measured iteration, the cores "
            "busy on the whole machine (`/proc/stat`), this JVM's CPU (every thread), every `postgres` process's "
            "(the server and its backends; the embedded one shares the machine), and the rest (other work on the "
            "machine), in cores (CPU seconds per second), JMH's means; then the CPU one job costs in the JVM and in "
            "PostgreSQL, in µs (cores ÷ jobs/s). A machine with every core busy is at its ceiling whatever the "
            "handler does; the split says which side to make cheaper to raise it.\n\n"
            + table(["dialect", "handler", "W", "what", "jobs/s", "machine, cores", "JVM", "PostgreSQL", "others",
                     "JVM µs/job", "PostgreSQL µs/job"], rows, ["l", "l", "r", "l", "r", "r", "r", "r", "r", "r", "r"]))


def queue_target(results, cores_of_machine):
    """Issue 41's throughput target: met, at the machine's ceiling (with the split that shows it), or not."""
    busy = find(results, "JobTableBench.pool", dialect="POSTGRES", handler="1ms", workers="16", claimBatch=DEFAULT_CLAIM_BATCH)
    noop = find(results, "JobTableBench.pool", dialect="POSTGRES", handler="noop", workers="16", claimBatch=DEFAULT_CLAIM_BATCH)
    score, forks = secondary(busy, "jobs")
    ceiling, _ = secondary(noop, "jobs")
    if score is None:
        return None
    split = cpu_split(busy, score)
    measured = f"{sig(score)} (forks {forks_text(forks)})"
    met = "yes" if score >= QUEUE_JOBS_TARGET else "**no**"
    if split is not None and ceiling:
        machine, jvm, postgres, _ = split
        measured += (f"; no-op handler {sig(ceiling)}; cores busy {machine:.2f} of {cores_of_machine} (JVM {jvm:.2f}, "
                     f"PostgreSQL {postgres:.2f}: {micros_per_job(jvm, score)} and {micros_per_job(postgres, score)} µs per job)")
        if score < QUEUE_JOBS_TARGET and machine >= SATURATED * cores_of_machine and score >= SATURATED * ceiling:
            met = "yes, at the machine's ceiling"
    return {"key": "queue-jobs", "value": score,
            "label": f"issue 41: jobs/s on the embedded default, W = 16, 1 ms handler, default claims, or the ceiling "
                     f"(every core busy, the 1 ms figure ≥ {SATURATED:g} × the no-op one)",
            "limit": f"≥ {QUEUE_JOBS_TARGET:,}", "measured": measured, "met": met}


def overlap(a, b):
    return bool(a) and bool(b) and min(a) <= max(b) and min(b) <= max(a)


def targets(results, cores_of_machine=None):
    """Issues 21's and 41's targets, judged from this run: a dict per target (key, label, limit, measured, met, value)."""
    rows = []
    pool = find(results, "JobTableBench.pool", dialect="POSTGRES", handler="1ms", workers="16",
                claimBatch=DEFAULT_CLAIM_BATCH)
    score, forks = secondary(pool, "jobs")
    if score is not None:
        rows.append({"key": "jobs", "value": score,
                     "label": f"jobs/s on the embedded default, W = 16, 1 ms handler, default claims ({DEFAULT_CLAIM_BATCH})",
                     "limit": f"≥ {JOBS_TARGET:,}", "measured": f"{sig(score)} (forks {forks_text(forks)})",
                     "met": "yes" if score >= JOBS_TARGET else "**no**"})
        queue = queue_target(results, cores_of_machine) if cores_of_machine else None
        if queue:
            rows.append(queue)
    for dialect in DIALECTS:
        plain, plain_forks = secondary(find(results, "JobTableBench.plainLoop", dialect=dialect, handler="1ms",
                                            workers="1"), "jobs")
        pooled, pool_forks = secondary(find(results, "JobTableBench.pool", dialect=dialect, handler="1ms", workers="1",
                                            claimBatch=DEFAULT_CLAIM_BATCH), "jobs")
        if plain is not None and pooled is not None:
            r = pooled / plain
            rows.append({"key": "plain-w1", "value": r, "dialect": dialect,
                         "label": f"pool ÷ plain loop, {dialect}, W = 1, 1 ms handler, default claims",
                         "limit": f"≥ {PLAIN_W1_TARGET:g} ×",
                         "measured": f"{fmt_ratio(r)} ({sig(pooled)} vs {sig(plain)} jobs/s; forks {forks_text(pool_forks)} vs "
                                     f"{forks_text(plain_forks)}{', overlapping' if overlap(pool_forks, plain_forks) else ''})",
                         "met": "yes" if r >= PLAIN_W1_TARGET else "**no**"})
    for workers in ["8", "64"]:
        none, none_forks = secondary(find(results, "SettlementBench.sleep1ms", settler="none", workers=workers), "items")
        counting, c_forks = secondary(find(results, "SettlementBench.sleep1ms", settler="counting", workers=workers),
                                      "items")
        if none is not None and counting is not None:
            r = counting / none
            rows.append({"key": "hook", "value": r, "workers": workers,
                         "label": f"settlement hook ÷ none, in-memory pool, {workers} workers, 1 ms handler",
                         "limit": f"≤ {HOOK_SLEEP_TARGET:.2f} ×",
                         "measured": f"{fmt_ratio(r)} ({sig(counting)} vs {sig(none)} ns/item; forks {forks_text(c_forks)} vs "
                                     f"{forks_text(none_forks)}{', overlapping' if overlap(c_forks, none_forks) else ''})",
                         "met": "yes" if r <= HOOK_SLEEP_TARGET else "**no**"})
    return rows


def targets_section(results, cores_of_machine):
    rows = [[t["label"], t["limit"], t["measured"], t["met"]] for t in targets(results, cores_of_machine)]
    if not rows:
        return ""
    return ("## Targets\n\nIssues 21's and 41's, judged from this run's figures (the per-fork means beside each; where the "
            "forks of the two sides overlap, the ratio is within the run's noise).\n\n"
            + table(["target", "limit", "measured", "met"], rows, ["l", "r", "l", "c"]))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--meta", required=True, help="the meta JSON that benchmarks/run durable writes")
    parser.add_argument("results", nargs="+", help="JMH JSON result files")
    args = parser.parse_args(argv)
    results = report.load(args.results)
    if not results:
        sys.exit("durable_report.py: no results in " + ", ".join(args.results))
    with open(args.meta) as f:
        meta = json.load(f)
    cores = machine_cores(meta)
    parts = [
        "# Benchmarks of durable work\n\n"
        "<!-- Generated by benchmarks/durable_report.py from benchmarks/results/durable-*.json; re-run "
        "benchmarks/run durable. -->\n\n"
        "The job table (issue 21) against a plain claim-handle-acknowledge loop on the same table, and the "
        "settlement hook's cost on the in-memory pool, in one run. Scores are JMH's means.",
        report.run_section(results, meta),
        targets_section(results, cores),
        jobtable_section(results),
        cpu_section(results, cores),
        settlement_section(results),
    ]
    sys.stdout.write("\n\n".join(p for p in parts if p) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
