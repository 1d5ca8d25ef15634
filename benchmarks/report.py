#!/usr/bin/env python3
"""Turns JMH's JSON results of drain's benchmarks into BENCHMARKS.md (printed on stdout).

    python3 benchmarks/report.py --meta results/full-meta.json --notes benchmarks/NOTES.md \
        --peers-meta results/peers-meta.json --peers results/peers.json ... \
        --durable-meta results/durable-meta.json --durable results/durable-jobtable.json ... \
        --kafka-meta results/kafka-meta.json --kafka-runs results/kafka-runs.jsonl \
        results/full-handoff.json ... > BENCHMARKS.md

(`benchmarks/run report` runs it so on what benchmarks/results holds.) The file opens with one screen
that gives every target of every part, its measured figure and its verdict, and links to the section
below that holds it: the queue and the pool from the full run, the pool beside the peers, the job
table (judged as benchmarks/durable_report.py judges it) and Kafka (as benchmarks/kafka/report.py
does); the durable and Kafka runs have their own reports in benchmarks/results/.

Standard library only, and deterministic: the output depends on the input files alone (the date
and the machine come from the meta file that benchmarks/run writes, never from the clock).

Every figure is shown raw (JMH's score, and its 99.9% confidence half-width when JMH gives one)
and as a ratio to the baseline measured in the same run: ArrayBlockingQueue for the queue
benchmarks, the poison pills (getters) or a consumer's takes (putters) for the wake-up, the bare
StructuredTaskScope fork for the pool. Ratios are score / baseline score; above 1 is slower.
"""

import argparse
import json
import math
import statistics
import sys
from datetime import datetime

PKG = "dev.drain.bench."

QUEUES = ["ShutdownQueue", "ArrayBlockingQueue", "LinkedBlockingQueue", "JoxChannel"]
QUEUE_BASELINE = "ArrayBlockingQueue"
POOLS = ["WorkerPool.SHUTDOWN_QUEUE", "WorkerPool.SENTINEL", "StructuredTaskScope", "VirtualThreadExecutor"]
POOL_BASELINE = "StructuredTaskScope"
WAKE_GET = ["ShutdownQueue.shutdown", "ArrayBlockingQueue.pills", "ArrayBlockingQueue.interrupt", "JoxChannel.done",
            "LockSupport.unpark"]
WAKE_PUT = ["ShutdownQueue.shutdown", "ArrayBlockingQueue.takes", "ArrayBlockingQueue.interrupt"]

# The targets, numbered as in the targets table of BENCHMARKS.md: pool per item against the bare fork, by handler
# and width; the flat cost; the wake-up against jox and the pills; the queue against
# ArrayBlockingQueue. Memory (target 5) is reported in section 5, not judged by a ratio.
QUEUE_TARGET = 1.0
POOL_SLEEP_TARGET = 1.2
POOL_NOOP_TARGET = {"8": 2.0, "64": 2.0, "1024": 3.0}
POOL_TARGET_WORKERS = ["8", "64", "1024"]
FLAT_TARGET = 1.5
WAKE_JOX_TARGET = 1.0
WAKE_PILLS_TARGET = 0.5


# ---- reading ---------------------------------------------------------------------------------

class Result:
    """One benchmark at one set of parameters."""

    def __init__(self, entry):
        self.bench = entry["benchmark"][len(PKG):] if entry["benchmark"].startswith(PKG) else entry["benchmark"]
        self.params = dict(entry.get("params") or {})
        primary = entry["primaryMetric"]
        self.score = float(primary["score"])
        self.error = _number(primary.get("scoreError"))
        self.unit = primary["scoreUnit"]
        self.samples = sum(len(fork) for fork in primary.get("rawData") or [])
        secondary = entry.get("secondaryMetrics") or {}
        norm = secondary.get("gc.alloc.rate.norm")
        self.bytes_per_op = float(norm["score"]) if norm else None
        cpu = secondary.get("cpu.time.norm")
        self.cpu_per_op = float(cpu["score"]) if cpu else None
        items = secondary.get("items")
        self.per_item = float(items["score"]) if items else None
        self.per_item_error = _number(items.get("scoreError")) if items else None
        self.entry = entry


def _number(value):
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def load(paths):
    results = []
    for path in paths:
        with open(path) as f:
            results.extend(Result(e) for e in json.load(f))
    return results


def find(results, bench, **params):
    for r in results:
        if r.bench == bench and all(r.params.get(k) == v for k, v in params.items()):
            return r
    return None


# ---- formatting ------------------------------------------------------------------------------

def sig(x, digits=3):
    """x with `digits` significant digits, thousands separated, no exponent."""
    if x is None:
        return "–"
    if x == 0:
        return "0"
    decimals = max(0, digits - 1 - int(math.floor(math.log10(abs(x)))))
    return f"{round(x, decimals):,.{decimals}f}"


def with_error(score, error):
    return sig(score) if error is None else f"{sig(score)} ± {sig(error, 2)}"


def ratio(score, base):
    if score is None or base is None or base == 0:
        return None
    return score / base


def fmt_ratio(r, bold_over=None):
    if r is None:
        return "–"
    text = f"{r:.2f}×"
    return f"**{text}**" if bold_over is not None and r > bold_over else text


def table(header, rows, align=None):
    align = align or ["l"] * len(header)
    marks = {"l": "---", "r": "--:", "c": ":-:"}
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(marks[a] for a in align) + "|"]
    out.extend("| " + " | ".join(str(c) for c in row) + " |" for row in rows)
    return "\n".join(out)


def unit_of(r):
    return r.unit.replace("/op", "").replace("us", "µs")


# ---- sections --------------------------------------------------------------------------------

def run_section(results, meta):
    any_result = results[0].entry
    started = datetime.fromisoformat(meta["started"].replace("Z", "+00:00"))
    finished = datetime.fromisoformat(meta["finished"].replace("Z", "+00:00"))
    minutes, seconds = divmod(int(meta["wall_seconds"]), 60)
    loads = [sample[1] for sample in meta.get("load") or []]
    before = meta.get("load_before")
    load_text = (f"before the run (1, 5, 15 min): {before[0]:.2f}, {before[1]:.2f}, {before[2]:.2f}; "
                 if before else "")
    if loads:
        load_text += (f"during it, 1-minute load average sampled every 5 s ({len(loads)} samples): "
                      f"min {min(loads):.2f}, median {statistics.median(loads):.2f}, max {max(loads):.2f}, "
                      f"on {meta['cores']} cores; the benchmarks' own threads count in it (a run that keeps "
                      f"both cores busy shows about 2 by itself)")
    else:
        load_text += "not sampled during the run"
    jvm_args = [a for a in any_result.get("jvmArgs", [])]
    seen = []
    for a in jvm_args:
        if a not in seen:
            seen.append(a)
    rows = [
        ["command", f"`{meta['command']}`"],
        ["date", f"{started:%Y-%m-%d %H:%M}–{finished:%H:%M} UTC ({minutes} min {seconds} s, build included)"],
        ["machine", f"{meta['cores']} cores, {meta['memory_gib']} GiB, Linux {meta['kernel']}"],
        ["JDK", f"{any_result['jdkVersion']} ({any_result['vmName']} {any_result['vmVersion']}); forks run with "
                f"`{' '.join(seen)}`"],
        ["JMH", f"{any_result['jmhVersion']}; "
                + "; ".join(f"{group}: `{options}`" for group, options in sorted(meta["jmh_options"].items()))],
        ["drain", f"commit {meta['commit']}"],
        ["machine load", load_text],
    ]
    return "## The run\n\n" + table(["", ""], rows)


def queue_rows(results, bench, configurations):
    """One row per queue and configuration: the configuration's labels, then time, ratio to the
    baseline queue of the same configuration, CPU time and its ratio, bytes per item."""
    rows = []
    for labels, params in configurations:
        base = find(results, bench, queue=QUEUE_BASELINE, **params)
        for queue in QUEUES:
            r = find(results, bench, queue=queue, **params)
            if r is None:
                continue
            rows.append(labels + [queue, with_error(r.score, r.error),
                                  fmt_ratio(ratio(r.score, base and base.score)), sig(r.cpu_per_op),
                                  fmt_ratio(ratio(r.cpu_per_op, base and base.cpu_per_op)), sig(r.bytes_per_op)])
    return rows


def handoff_section(results):
    rows = queue_rows(results, "HandoffBench.handoff",
                      [([threads, capacity], dict(capacity=capacity, threads=threads))
                       for threads in ["virtual", "platform"] for capacity in ["1", "16", "100"]])
    if not rows:
        return ""
    return ("## 1. Queue hand-off: one producer, one consumer\n\n"
            "`HandoffBench`: 65,536 items from one producer thread to one consumer thread through one queue; "
            "time per item (ns), ratio to `ArrayBlockingQueue` at the same capacity and thread kind, and "
            "bytes allocated per item (`-prof gc`).\n\n"
            + table(["threads", "capacity", "queue", "ns/item", "ratio to ABQ", "CPU ns/item", "CPU ratio",
                     "B/item"], rows, ["l", "r", "l", "r", "r", "r", "r", "r"]))


def fastpath_section(results):
    rows = []
    base = find(results, "FastPathBench.putTake", queue=QUEUE_BASELINE)
    for queue in QUEUES:
        r = find(results, "FastPathBench.putTake", queue=queue)
        if r is None:
            continue
        rows.append([queue, with_error(r.score, r.error), fmt_ratio(ratio(r.score, base and base.score)),
                     sig(r.bytes_per_op)])
    if not rows:
        return ""
    return ("## 1a. The hot path alone\n\n"
            "`FastPathBench`: one thread puts an item into a queue of 16 and takes it back: no call blocks, the "
            "lock is never contended. Time per put-and-take pair (ns): what each queue does inside its lock.\n\n"
            + table(["queue", "ns/pair", "ratio to ABQ", "B/pair"], rows, ["l", "r", "r", "r"]))


def mpmc_section(results):
    rows = queue_rows(results, "MpmcBench.manyToMany",
                      [([shape.replace("x", " × "), capacity], dict(capacity=capacity, shape=shape))
                       for shape in ["4x4", "64x64"] for capacity in ["16", "1024"]])
    if not rows:
        return ""
    return ("## 2. Many producers and consumers\n\n"
            "`MpmcBench`: producers × consumers virtual threads on one queue, 65,536 items in all; time per item "
            "(ns), ratio to `ArrayBlockingQueue`, bytes per item.\n\n"
            + table(["producers × consumers", "capacity", "queue", "ns/item", "ratio to ABQ", "CPU ns/item",
                     "CPU ratio", "B/item"], rows, ["l", "r", "l", "r", "r", "r", "r", "r"]))


def wakeup_section(results):
    rows = []
    for bench, label, ways, baseline in [("WakeupBench.getters", "get()", WAKE_GET, WAKE_GET[1]),
                                         ("WakeupBench.putters", "put() on a full queue", WAKE_PUT, WAKE_PUT[1])]:
        for n in ["1000", "10000"]:
            base = find(results, bench, n=n, release=baseline)
            for way in ways:
                r = find(results, bench, n=n, release=way)
                if r is None:
                    continue
                rows.append([label, f"{int(n):,}", way, with_error(r.score, r.error), unit_of(r),
                             fmt_ratio(ratio(r.score, base and base.score))])
    if not rows:
        return ""
    return ("## 3. Shutdown wake-up\n\n"
            "`WakeupBench`: n virtual threads blocked on one queue; time from the releasing call until all n have "
            "returned from their blocking call (one shot per iteration, fresh threads each time). Baseline: "
            "`ArrayBlockingQueue.pills` (n poison pills put into an `ArrayBlockingQueue(n)`) for getters; for "
            "putters, which an `ArrayBlockingQueue` can only release by making room, `ArrayBlockingQueue.takes` "
            "(a consumer takes n items from the full queue of 16). `interrupt` interrupts each blocked thread."
            + (" `LockSupport.unpark` is the floor, with no queue and no lock: n threads parked on a flag, released "
               "by raising it and unparking each; what it measures is waking, running and ending n virtual threads."
               if any(row[2] == "LockSupport.unpark" for row in rows) else "")
            + "\n\n"
            + table(["blocked in", "n", "released by", "time", "unit", "ratio to baseline"], rows,
                    ["l", "r", "l", "r", "l", "r"]))


def pool_section(results):
    noop_rows, sleep_rows = [], []
    for workers in ["1", "8", "64", "1024"]:
        base = find(results, "PoolBench.noop", pool=POOL_BASELINE, workers=workers)
        for pool in POOLS:
            r = find(results, "PoolBench.noop", pool=pool, workers=workers)
            if r is not None:
                noop_rows.append([workers, pool, with_error(r.score, r.error),
                                  fmt_ratio(ratio(r.score, base and base.score)), sig(r.cpu_per_op),
                                  fmt_ratio(ratio(r.cpu_per_op, base and base.cpu_per_op)), sig(r.bytes_per_op)])
        base = find(results, "PoolBench.sleep1ms", pool=POOL_BASELINE, workers=workers)
        for pool in POOLS:
            r = find(results, "PoolBench.sleep1ms", pool=pool, workers=workers)
            if r is not None:
                ideal_us = 1000.0 / int(workers)
                per_item_us = r.per_item / 1000.0 if r.per_item is not None else None
                sleep_rows.append([workers, pool, sig(r.score / 1e6), sig(per_item_us),
                                   sig(ideal_us),
                                   fmt_ratio(ratio(r.per_item, base and base.per_item))])
    if not noop_rows and not sleep_rows:
        return ""
    text = ("## 4. Pool overhead per item\n\n"
            "`PoolBench`: each invocation is one whole run, driven from a virtual thread that the benchmark starts: "
            "build the pool (or open the scope), push every item through, consume every result, and wait for the "
            "last thread. Every item runs on a virtual thread of its own in all four. `WorkerPool.*`: drain's pool with the named intake, queue size 16, the "
            "per-item timeout (30 s) and a metrics sink on. `StructuredTaskScope` (the baseline): one scope, one "
            "`fork` per item under a `Semaphore(workers)`, then `join`. `VirtualThreadExecutor`: the same with "
            "`Executors.newVirtualThreadPerTaskExecutor()`.\n\n"
            "No-op handler, 10,000 items per run: time per item (ns), which is all overhead; ratio to the bare "
            "structured fork; bytes allocated per item.\n\n"
            + table(["workers", "pool", "ns/item", "ratio to STS", "CPU ns/item", "CPU ratio", "B/item"], noop_rows,
                    ["r", "l", "r", "r", "r", "r", "r"]))
    if sleep_rows:
        text += ("\n\nHandler sleeping 1 ms, workers × 8 items per run (about 8 ms of sleeping at any width): "
                 "time per run, time per item, the ideal per item (1 ms / workers), and the ratio of the time "
                 "per item to the bare structured fork's.\n\n"
                 + table(["workers", "pool", "ms/run", "µs/item", "ideal µs/item", "ratio to STS"], sleep_rows,
                         ["r", "l", "r", "r", "r", "r"]))
    return text


LADDER = ["1.fork", "2.queues", "3.scopePerItem", "4.wokenWait", "5.WorkerPool.noMetrics", "6.WorkerPool"]


def ladder_section(results):
    rows = []
    for workers in ["8", "64"]:
        base = find(results, "PoolLadderBench.ladder", step=LADDER[0], workers=workers)
        previous = None
        for step in LADDER:
            r = find(results, "PoolLadderBench.ladder", step=step, workers=workers)
            if r is None:
                continue
            added = "" if previous is None else f"{r.score - previous.score:+,.0f}"
            cpu_added = "" if previous is None or r.cpu_per_op is None or previous.cpu_per_op is None \
                else f"{r.cpu_per_op - previous.cpu_per_op:+,.0f}"
            rows.append([workers, f"`{step}`", with_error(r.score, r.error), added,
                         fmt_ratio(ratio(r.score, base and base.score)), sig(r.cpu_per_op), cpu_added,
                         fmt_ratio(ratio(r.cpu_per_op, base and base.cpu_per_op)), sig(r.bytes_per_op)])
            previous = r
    if not rows:
        return ""
    return ("## 4b. What the pool's cost per item is made of\n\n"
            "`PoolLadderBench`: from the bare structured fork to the `WorkerPool`, one mechanism added per step "
            "(no-op handler, 10,000 items per run): `2.queues` is the pool's shape without a thread per item "
            "(producer → `ShutdownQueue(16)` intake → workers calling the handler inline → "
            "`ShutdownQueue(workers)` outbox → the benchmark thread); `3.scopePerItem` runs each item in a scope "
            "of its own (open, fork, join, close); `4.wokenWait` waits for that subtask as the pool does (it parks "
            "until the subtask's end unparks it, no timer: decision 0022; then join); `5.WorkerPool.noMetrics` is the pool itself without a metrics sink; "
            "`6.WorkerPool` with one. Steps 2–4 are written in the benchmark with the pool's structure; 5 and 6 "
            "are the real pool.\n\n"
            + table(["workers", "step", "ns/item", "added (ns)", "ratio to 1.fork", "CPU ns/item", "CPU added",
                     "CPU ratio", "B/item"], rows, ["r", "l", "r", "r", "r", "r", "r", "r", "r"]))


def allocation_section(results):
    rows = []
    for capacity in ["1", "16", "100"]:
        cells = []
        for queue in QUEUES:
            r = find(results, "HandoffBench.handoff", queue=queue, capacity=capacity, threads="virtual")
            cells.append(sig(r.bytes_per_op) if r and r.bytes_per_op is not None else "–")
        rows.append([f"hand-off, capacity {capacity}, virtual"] + cells)
    queue_table = table(["B/item"] + QUEUES, rows, ["l"] + ["r"] * len(QUEUES))
    rows = []
    for workers in ["1", "8", "64", "1024"]:
        cells = []
        for pool in POOLS:
            r = find(results, "PoolBench.noop", pool=pool, workers=workers)
            cells.append(sig(r.bytes_per_op) if r and r.bytes_per_op is not None else "–")
        rows.append([f"no-op, {workers} workers"] + cells)
    pool_table = table(["B/item"] + POOLS, rows, ["l"] + ["r"] * len(POOLS))
    return ("## 5. Allocation per operation\n\n"
            "From `-prof gc` (`gc.alloc.rate.norm`) in the same run: bytes allocated per item, everything the "
            "JVM allocated during the measurement divided by the items (the two threads an invocation starts "
            "included, a few bytes per item). The item itself is one preallocated `Integer`.\n\n"
            + queue_table + "\n\n" + pool_table)


def _judge(rows, summary, target, label, checks):
    """Adds one row per check (configuration, value, baseline, limit, unit, CPU ratio) and a summary line."""
    met = total = 0
    for configuration, value, base, limit, unit, cpu in checks:
        if value is None or base is None:
            continue
        r = value / base
        total += 1
        met += r <= limit
        rows.append([target, configuration, f"≤ {limit:g} ×", f"{fmt_ratio(r)} ({sig(value)} vs {sig(base)} {unit})",
                     cpu, "yes" if r <= limit else "**no**"])
    if total:
        summary.append(f"- {label}: met in {met} of {total} configurations.")


def _pool_checks(results):
    checks = []
    for workers in POOL_TARGET_WORKERS:
        base = find(results, "PoolBench.sleep1ms", pool=POOL_BASELINE, workers=workers)
        for pool in POOLS[:2]:
            r = find(results, "PoolBench.sleep1ms", pool=pool, workers=workers)
            ok = r is not None and base is not None and r.per_item is not None and base.per_item is not None
            checks.append((f"{pool}, 1 ms sleep, {workers} workers", r.per_item / 1000 if ok else None,
                           base.per_item / 1000 if ok else None, POOL_SLEEP_TARGET, "µs",
                           fmt_ratio(ratio(r.cpu_per_op, base.cpu_per_op)) if ok else "–"))
    for workers in POOL_TARGET_WORKERS:
        base = find(results, "PoolBench.noop", pool=POOL_BASELINE, workers=workers)
        for pool in POOLS[:2]:
            r = find(results, "PoolBench.noop", pool=pool, workers=workers)
            ok = r is not None and base is not None
            checks.append((f"{pool}, no-op, {workers} workers", r.score if ok else None, base.score if ok else None,
                           POOL_NOOP_TARGET[workers], "ns", fmt_ratio(ratio(r.cpu_per_op, base.cpu_per_op)) if ok else "–"))
    return checks


def _flat_checks(results):
    checks = []
    for pool in POOLS[:2]:
        over = {}
        for workers in ["8", "1024"]:
            r = find(results, "PoolBench.noop", pool=pool, workers=workers)
            base = find(results, "PoolBench.noop", pool=POOL_BASELINE, workers=workers)
            over[workers] = r.score - base.score if r is not None and base is not None else None
        checks.append((f"{pool}, no-op: overhead at 1,024 workers over overhead at 8", over["1024"], over["8"],
                       FLAT_TARGET, "ns", "–"))
    return checks


def _wake_checks(results):
    checks = []
    for n in ["1000", "10000"]:
        sq = find(results, "WakeupBench.getters", n=n, release="ShutdownQueue.shutdown")
        jox = find(results, "WakeupBench.getters", n=n, release="JoxChannel.done")
        pills = find(results, "WakeupBench.getters", n=n, release="ArrayBlockingQueue.pills")
        unit = unit_of(sq) if sq is not None else ""
        checks.append((f"shutdown() vs jox done(), {int(n):,} blocked getters", sq and sq.score, jox and jox.score,
                       WAKE_JOX_TARGET, unit, "–"))
        checks.append((f"shutdown() vs poison pills, {int(n):,} blocked getters", sq and sq.score,
                       pills and pills.score, WAKE_PILLS_TARGET, unit, "–"))
    return checks


def _queue_checks(results):
    checks = []
    configurations = []
    for threads in ["virtual", "platform"]:
        for capacity in ["1", "16", "100"]:
            configurations.append((f"hand-off, capacity {capacity}, {threads}", "HandoffBench.handoff",
                                   dict(capacity=capacity, threads=threads)))
    for shape in ["4x4", "64x64"]:
        for capacity in ["16", "1024"]:
            configurations.append((f"{shape.replace('x', ' × ')}, capacity {capacity}", "MpmcBench.manyToMany",
                                   dict(capacity=capacity, shape=shape)))
    for label, bench, params in configurations:
        sq = find(results, bench, queue="ShutdownQueue", **params)
        abq = find(results, bench, queue=QUEUE_BASELINE, **params)
        ok = sq is not None and abq is not None
        checks.append((label, sq.score if ok else None, abq.score if ok else None, QUEUE_TARGET, "ns",
                       fmt_ratio(ratio(sq.cpu_per_op, abq.cpu_per_op)) if ok else "–"))
    return checks


def heap_section(heap):
    rows = [[f"{s['delivered']:,}", f"{s['heap_mib']:.1f}", f"{s['seconds']:.1f}"] for s in heap["samples"]]
    verdict = "does not grow" if heap["growth_mib"] <= heap["slack_mib"] else "GROWS"
    return ("## 6. The heap over a long run\n\n"
            f"`benchmarks/run heap` (`HeapRun`): {heap['items']:,} items through one `WorkerPool` run at "
            f"{heap['workers']:,} workers (no-op handler, a metrics sink on), the heap in use after a full GC "
            f"sampled by the consumer every tenth of the run (JDK {heap['jdk']}). From the first sample after the "
            f"start to the last, the heap after GC changed by {heap['growth_mib']:+.1f} MiB: it {verdict} "
            f"(the check allows {heap['slack_mib']} MiB of GC noise).\n\n"
            + table(["items delivered", "heap after GC (MiB)", "seconds"], rows, ["r", "r", "r"]))


def targets_section(results):
    rows, summary = [], []
    _judge(rows, summary, "1. pool per item vs bare fork", "1. `WorkerPool` per item against the bare "
           f"`StructuredTaskScope` fork (1 ms handler ≤ {POOL_SLEEP_TARGET:g} × at 8, 64 and 1,024 workers; no-op "
           "≤ 2 × at 8 and 64, ≤ 3 × at 1,024)", _pool_checks(results))
    _judge(rows, summary, "2. flat cost", f"2. Flat cost (the pool's overhead over the fork at 1,024 workers within "
           f"{FLAT_TARGET:g} × its overhead at 8)", _flat_checks(results))
    _judge(rows, summary, "3. wake-up", f"3. Wake-up of blocked getters (`shutdown()` ≤ {WAKE_JOX_TARGET:g} × jox's "
           f"`Channel.done()` and ≤ {WAKE_PILLS_TARGET:g} × poison pills, judged at 10,000 getters; 1,000 is shown "
           "beside it)", _wake_checks(results))
    _judge(rows, summary, "4. queue vs ABQ", f"4. `ShutdownQueue` ≤ {QUEUE_TARGET:g} × `ArrayBlockingQueue` "
           "(hand-off and many-to-many)", _queue_checks(results))
    summary.append("- 5. Memory: bytes allocated per item for the pool and the queues beside their baselines are in "
                   "section 5 (`-prof gc`); the heap over a 10-million-item run at 1,024 workers is in section 6 "
                   "(`benchmarks/run heap`).")
    if not rows:
        return ""
    return ("## Targets\n\nComputed by the report script from this run's wall-clock figures (the CPU-time "
            "ratio beside each is for context). A target is decided by a 3-fork run (`benchmarks/run full`); "
            "a quick run's verdicts are indications.\n\n" + "\n".join(summary) + "\n\n"
            + table(["target", "configuration", "limit", "ratio (raw)", "CPU ratio", "met"], rows,
                    ["l", "l", "r", "r", "r", "c"]))


# ---- beside the peers (PeersBench, issue 23) ----------------------------------------------------

PEERS = ["drain", "fork", "gatherers", "executor", "platformPool", "jox", "reactor",
         "structure", "structureTimed", "structureOneScope"]
# The peers a user would pick instead of drain; the structure rows are drain's own shape from JDK
# parts, a yardstick for drain's code, not a choice.
USER_PEERS = ["fork", "gatherers", "executor", "platformPool", "jox", "reactor"]
PEER_LABELS = {
    "drain": "**drain** (`WorkerPool`, defaults)",
    "fork": "bare `StructuredTaskScope` fork + `Semaphore`",
    "gatherers": "`Gatherers.mapConcurrent(W, f)`",
    "executor": "virtual-thread executor + `ExecutorCompletionService` + `Semaphore`",
    "platformPool": "`newFixedThreadPool(W)` + `ExecutorCompletionService`",
    "jox": "jox `Channel(16)` + W worker forks",
    "reactor": "Reactor `flatMap` + `timeout` + `retryWhen`, virtual threads",
    "structure": "drain's structure from JDK parts (scope per attempt)",
    "structureTimed": "the same, each attempt's scope with a timeout",
    "structureOneScope": "the same, one scope per worker",
}
PEER_HANDLERS = [("sleep1ms", "1 ms sleep", 1_000_000), ("sleep10ms", "10 ms sleep", 10_000_000), ("noop", "no-op", None)]
PEER_WORKERS = ["8", "64", "1024", "10000"]
PEER_NOOP_ITEMS = 10_000  # PeersBench.NOOP_ITEMS (PoolBench's)
PEER_ROUNDS = 4           # PeersBench.ROUNDS: a sleeping run has workers × 4 items
HANDLER_PACED = [("sleep1ms", "8"), ("sleep1ms", "64"), ("sleep10ms", "8"), ("sleep10ms", "64"), ("sleep10ms", "1024")]
CPU_PACED = [("noop", "8"), ("noop", "64"), ("noop", "1024"), ("noop", "10000"), ("sleep1ms", "1024"),
             ("sleep1ms", "10000")]


def peer_items(handler, workers):
    """How many items one PeersBench invocation runs."""
    return PEER_NOOP_ITEMS if handler == "noop" else int(workers) * PEER_ROUNDS


class PeerRun:
    """One peer at one handler and width: per-fork means of the time, CPU time and bytes per item."""

    def __init__(self, r):
        self.peer, self.handler, self.workers = r.params["peer"], r.params["handler"], r.params["workers"]
        n = peer_items(self.handler, self.workers)
        secondary = r.entry.get("secondaryMetrics") or {}

        def per_fork(metric, divide):
            raw = (secondary.get(metric) or {}).get("rawData") or []
            return [statistics.fmean(fork) / divide for fork in raw if fork]

        self.time = per_fork("items", 1)            # ns per item, wall clock
        self.cpu = per_fork("cpu.time.norm", n)     # ns of the JVM's CPU per item
        self.bytes = per_fork("gc.alloc.rate.norm", n)

    @staticmethod
    def mean(forks):
        return statistics.fmean(forks) if forks else None


def peer_runs(results):
    runs = {}
    for r in results:
        if r.bench == "PeersBench.run" and "peer" in r.params:
            run = PeerRun(r)
            runs[(run.peer, run.handler, run.workers)] = run
    return runs


def best_user_peer(runs, handler, workers):
    candidates = [runs[(p, handler, workers)] for p in USER_PEERS if (p, handler, workers) in runs]
    candidates = [c for c in candidates if c.time]
    return min(candidates, key=lambda c: PeerRun.mean(c.time)) if candidates else None


def peer_widths(runs, handler):
    return [w for w in PEER_WORKERS if any(k[1:] == (handler, w) for k in runs)]


def peer_rows(runs, handler, widths, cell):
    """A row per peer that ran with this handler: its label, then cell(run or None, width) per width."""
    return [[PEER_LABELS.get(peer, peer)] + [cell(runs.get((peer, handler, w)), w) for w in widths]
            for peer in PEERS if any((peer, handler, w) in runs for w in widths)]


def peers_time_table(runs, handler, pause_ns):
    widths = peer_widths(runs, handler)

    def cell(run, w):
        if run is None or not run.time:
            return "–"
        best = best_user_peer(runs, handler, w)
        text = sig(PeerRun.mean(run.time))
        if best is run:
            return f"**{text}**"
        if best is not None:
            text += f" ({fmt_ratio(ratio(PeerRun.mean(run.time), PeerRun.mean(best.time)))})"
        return text

    ideal = [["ideal (the sleep ÷ workers)"] + [sig(pause_ns / int(w)) for w in widths]] if pause_ns else []
    rows = ideal + peer_rows(runs, handler, widths, cell)
    return table(["ns per item"] + [f"{int(w):,} workers" for w in widths], rows, ["l"] + ["r"] * len(widths))


def peers_cost_table(runs, handler):
    widths = peer_widths(runs, handler)
    rows = peer_rows(runs, handler, widths, lambda run, w: "–" if run is None
                     else f"{sig(PeerRun.mean(run.cpu))} · {sig(PeerRun.mean(run.bytes))}")
    return table(["CPU ns · bytes per item"] + [f"{int(w):,} workers" for w in widths], rows,
                 ["l"] + ["r"] * len(widths))


def judge_forks(a, b, limit):
    """The non-overlap rule: met when every fork of a is within limit × every fork of b, missed when
    none is, undecided when the forks of the two sides overlap across the limit."""
    if not a or not b:
        return "–"
    if max(a) <= limit * min(b):
        return "yes"
    if min(a) > limit * max(b):
        return "**no**"
    return "undecided (forks overlap)"


def forks_text(forks):
    return " / ".join(sig(f) for f in forks)


def peer_targets(runs):
    """Issue 23's targets, judged fork by fork: a dict per row (target, config, limit, ratio, verdict, ...)."""
    rows = []

    def row(target, config, limit, a, b, metric, b_name):
        fa, fb = getattr(a, metric), getattr(b, metric)
        rows.append({"target": target, "config": config, "limit": limit, "ratio": ratio(PeerRun.mean(fa), PeerRun.mean(fb)),
                     "b_name": b_name, "fa": fa, "fb": fb, "verdict": judge_forks(fa, fb, limit)})

    def cfg(handler, workers):
        return f"{dict((h, l) for h, l, _ in PEER_HANDLERS)[handler]}, {int(workers):,} workers"

    for handler, w in HANDLER_PACED:
        drain, best = runs.get(("drain", handler, w)), best_user_peer(runs, handler, w)
        if drain and best:
            row("1. handler-paced: time", cfg(handler, w), 1.10, drain, best, "time", best.peer)
    for handler, w in CPU_PACED:
        drain, structure = runs.get(("drain", handler, w)), runs.get(("structure", handler, w))
        if drain and structure:
            row("2. CPU-paced: time", cfg(handler, w), 1.10, drain, structure, "time", "structure")
            row("2. CPU-paced: CPU", cfg(handler, w), 1.10, drain, structure, "cpu", "structure")
            row("2. CPU-paced: bytes", cfg(handler, w), 1.0, drain, structure, "bytes", "structure")
    for handler, w in CPU_PACED:
        drain, fork = runs.get(("drain", handler, w)), runs.get(("fork", handler, w))
        if drain and fork:
            row("2. moonshot: CPU", cfg(handler, w), 2.0, drain, fork, "cpu", "fork")
    drain, best = runs.get(("drain", "sleep1ms", "1024")), best_user_peer(runs, "sleep1ms", "1024")
    if drain and best:
        row("2. moonshot: time", cfg("sleep1ms", "1024"), 1.5, drain, best, "time", best.peer)
    for peer, limits in [("drainSink", {"sleep1ms": 1.2, "noop": 1.5}), ("drainSettled", {"sleep1ms": 1.1})]:
        for handler, limit in limits.items():
            for w in ["8", "64"]:
                a, drain = runs.get((peer, handler, w)), runs.get(("drain", handler, w))
                if a and drain:
                    row(f"3. {'metrics sink' if peer == 'drainSink' else 'settlement hook'}", cfg(handler, w),
                        limit, a, drain, "time", "drain")
    return rows


def peer_target_rows(runs):
    return [[t["target"], t["config"], f"≤ {t['limit']:g} ×", f"{fmt_ratio(t['ratio'])} vs {t['b_name']}",
             f"{forks_text(t['fa'])} vs {forks_text(t['fb'])}", t["verdict"]] for t in peer_targets(runs)]


def peers_section(results, meta, notes):
    runs = peer_runs(results)
    if not runs:
        return ""
    started = datetime.fromisoformat(meta["started"].replace("Z", "+00:00"))
    finished = datetime.fromisoformat(meta["finished"].replace("Z", "+00:00"))
    loads = [sample[1] for sample in meta.get("load") or []]
    load_text = (f"1-minute load average during the run: median {statistics.median(loads):.2f}, max "
                 f"{max(loads):.2f} on {meta['cores']} cores" if loads else "load not sampled")
    parts = [
        "## Beside the peers\n\n"
        "What a Java user would write instead of drain, each run whole (built, fed from an iterator, drained by "
        "its caller on a virtual thread, closed) over the same items and handler, at most W items at once "
        f"(`PeersBench`). A no-op run has {PEER_NOOP_ITEMS:,} items, a sleeping run W × {PEER_ROUNDS}. Every "
        "peer is checked to deliver each item exactly once before it is measured. The figure is the wall time "
        "per item in ns, the mean of the forks' means; in brackets, the ratio to the fastest of the peers a "
        "user would pick (in bold; the structure rows are drain's own shape built from JDK parts, not a "
        "choice). "
        f"Run: `{meta['command']}`, {started:%Y-%m-%d %H:%M}–{finished:%H:%M} UTC, commit {meta['commit']}, "
        f"{meta['cores']} cores, {load_text}; JMH `{' '.join(meta['jmh_options'].values())}`."]
    for handler, label, pause in PEER_HANDLERS:
        if any(k[1] == handler for k in runs):
            parts.append(f"**{label}**\n\n" + peers_time_table(runs, handler, pause))
    if notes:
        parts.append(notes)
    rows = peer_target_rows(runs)
    if rows:
        parts.append(
            "### The peer targets\n\n"
            "Each target compares two sides fork by fork (a fork is a JVM of its own; the forks' means are shown). "
            "It is met when every fork of drain is within the limit of every fork of the other side, missed when "
            "none is, and undecided when the forks overlap across the limit (then more forks decide). The target "
            "numbers are issue 23's: 1, where the handler sets the pace, drain against the fastest peer; 2, where "
            "the CPU sets the pace, drain against its own structure from JDK parts (time, CPU, bytes) and the "
            "moonshot against the bare fork; 3, the options against drain without them.\n\n"
            + table(["target", "configuration", "limit", "ratio (means)", "forks: drain side vs other side", "met"],
                    rows, ["l", "l", "r", "r", "r", "c"]))
    cost = [f"**{label}**\n\n" + peers_cost_table(runs, handler) for handler, label, _ in PEER_HANDLERS
            if any(k[1] == handler for k in runs)]
    parts.append("### CPU time and allocation beside the peers\n\n"
                 "The whole JVM's CPU time per item (all threads: carriers, timers, JIT, GC) and the bytes allocated "
                 "per item (`-prof gc`), same run.\n\n" + "\n\n".join(cost))
    return "\n\n".join(parts)


# ---- the first screen: every target, met or missed -------------------------------------------

def _verdict(v):
    """'met', 'missed' or 'undecided', from any of the reports' verdict cells."""
    v = v.strip("*").lower()
    return "met" if v.startswith("yes") else "missed" if v == "no" else "undecided"


def _summary(verdicts):
    """One cell for a group of judged configurations: met, missed, or how many of each."""
    kinds = [_verdict(v) for v in verdicts]
    every = {1: "", 2: " in both"}.get(len(kinds), f" in all {len(kinds)}")
    if all(k == "met" for k in kinds):
        return "met" + every
    if all(k == "missed" for k in kinds):
        return f"**missed{every}**"
    counts = [f"{kinds.count(k)} {k}" for k in ["met", "undecided", "missed"] if kinds.count(k)]
    return ", ".join(counts) + f" (of {len(kinds)})"


def _span(ratios):
    ratios = [r for r in ratios if r is not None]
    if not ratios:
        return "–"
    low, high = min(ratios), max(ratios)
    return fmt_ratio(low) if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}–{high:.2f}×"


def _checked(checks):
    """(ratio, verdict) of each configuration of a full-run target (value ÷ base against the limit)."""
    return [(value / base, "yes" if value / base <= limit else "no")
            for _, value, base, limit, _, _ in checks if value is not None and base is not None]


def glance_section(results, meta, peers, peers_meta, durable, durable_meta, kafka_runs, kafka_meta, extra=()):
    """The file's first screen: each target of every part, its measured figure, met or missed, and where
    its table is. Built from the same results as the sections below it."""
    rows, rooms = [], []

    def add(room, target, pairs, where, measured=None):
        if pairs:
            rows.append([f"**{room}**" if room not in rooms else "", target,
                         measured or _span([r for r, _ in pairs]), _summary([v for _, v in pairs]), where])
            rooms.append(room)

    if results:
        wake = [c for c in _wake_checks(results) if c[0].endswith("10,000 blocked getters")]
        add("the queue", f"`shutdown()` releases 10,000 blocked getters in ≤ {WAKE_JOX_TARGET:g} × the time of jox's "
            "`Channel.done()`", _checked([c for c in wake if "jox" in c[0]]), "[Targets](#targets), [3](#3-shutdown-wake-up)")
        add("the queue", f"… and in ≤ {WAKE_PILLS_TARGET:g} × the time of poison pills through an "
            "`ArrayBlockingQueue`", _checked([c for c in wake if "pills" in c[0]]), "[Targets](#targets)")
        queue = _queue_checks(results)
        add("the queue", f"`ShutdownQueue` hands off one to one in ≤ {QUEUE_TARGET:g} × `ArrayBlockingQueue`'s time "
            "(capacity 1, 16, 100; virtual and platform threads)", _checked([c for c in queue if "hand-off" in c[0]]),
            "[Targets](#targets), [1](#1-queue-hand-off-one-producer-one-consumer)")
        add("the queue", f"… and many to many in ≤ {QUEUE_TARGET:g} × (4 × 4 and 64 × 64; capacity 16, 1,024)",
            _checked([c for c in queue if "hand-off" not in c[0]]), "[2](#2-many-producers-and-consumers)")
    if peers:
        runs = peer_runs(peers)
        targets = peer_targets(runs)

        def group(prefix):
            return [(t["ratio"], t["verdict"]) for t in targets if t["target"].startswith(prefix)]

        add("the pool beside the peers", "time ≤ 1.1 × the fastest peer where the handler sets the pace (1 and 10 ms, "
            "8 to 1,024 workers)", group("1."), "[The peer targets](#the-peer-targets)")
        add("the pool beside the peers", "time and CPU ≤ 1.1 × drain's own structure from JDK parts where the CPU sets "
            "the pace", group("2. CPU-paced: time") + group("2. CPU-paced: CPU"), "[The peer targets](#the-peer-targets)")
        add("the pool beside the peers", "bytes per item ≤ 1 × that structure's", group("2. CPU-paced: bytes"),
            "[The peer targets](#the-peer-targets)")
        add("the pool beside the peers", "moonshot: CPU ≤ 2 × the bare fork's, time ≤ 1.5 × the fastest peer",
            group("2. moonshot"), "[The peer targets](#the-peer-targets)")
        add("the pool beside the peers", "a metrics sink ≤ 1.2 × (1 ms) and 1.5 × (no-op) the pool without one; the "
            "settlement hook ≤ 1.1 ×", group("3."), "[The peer targets](#the-peer-targets)")
    if results:
        add("the pool beside the bare fork", f"`WorkerPool` per item ≤ {POOL_SLEEP_TARGET:g} × a bare "
            "`StructuredTaskScope` fork with a 1 ms handler, ≤ 2–3 × with a no-op one (8 to 1,024 workers, both intakes)",
            _checked(_pool_checks(results)), "[Targets](#targets), [4](#4-pool-overhead-per-item)")
        add("the pool beside the bare fork", f"flat cost: its overhead at 1,024 workers ≤ {FLAT_TARGET:g} × its "
            "overhead at 8", _checked(_flat_checks(results)), "[Targets](#targets)")
    if durable:
        dt = durable_report.targets(durable, durable_report.machine_cores(durable_meta or {}))
        jobs = [t for t in dt if t["key"] == "jobs"]
        add("the job table", f"≥ {durable_report.JOBS_TARGET:,} jobs/s through the embedded PostgreSQL (16 workers, "
            "1 ms handler, default claims)", [(None, t["met"]) for t in jobs], "[The job table](#the-job-table)",
            measured=", ".join(f"{sig(t['value'])} jobs/s" for t in jobs))
        queue = [t for t in dt if t["key"] == "queue-jobs"]
        add("the job table", f"issue 41: ≥ {durable_report.QUEUE_JOBS_TARGET:,} jobs/s there, or the machine's ceiling "
            "(every core busy, the 1 ms figure ≥ 0.9 × the no-op one)", [(None, t["met"]) for t in queue],
            "[durable](benchmarks/results/durable.md#where-the-cpu-goes)", measured=", ".join(t["measured"] for t in queue))
        plain = [t for t in dt if t["key"] == "plain-w1"]
        add("the job table", f"the pool ≥ {durable_report.PLAIN_W1_TARGET:g} × a plain claim-handle-acknowledge loop "
            f"at 1 worker ({', '.join(t['dialect'].capitalize() if t['dialect'] == 'POSTGRES' else t['dialect'] for t in plain)})",
            [(t["value"], t["met"]) for t in plain], "[The job table](#the-job-table)",
            measured=", ".join(fmt_ratio(t["value"]) for t in plain))
        hook = [t for t in dt if t["key"] == "hook"]
        add("the job table", f"the settlement hook ≤ {durable_report.HOOK_SLEEP_TARGET:g} × no hook, 1 ms handler, 8 and "
            "64 workers", [(t["value"], t["met"]) for t in hook], "[The job table](#the-job-table)")
    if kafka_runs:
        kt = kafka_report.targets(kafka_runs)
        one = [t for t in kt if t["key"] == "one-worker"]
        forked = [t for t in kt if t["key"] == "one-worker-forked"]
        add("Kafka", "drain ≥ 1 × a plain `KafkaConsumer` loop at 1 worker, 1 ms handler",
            [(t["ratio"], t["met"]) for t in one], "[Kafka](#kafka), decision [0049]"
            "(specs/decisions/0049-the-one-worker-kafka-target-is-left-missed.md)",
            measured=", ".join(fmt_ratio(t["ratio"]) for t in one)
            + "".join(f" (that loop forking each call in a scope: {fmt_ratio(t['ratio'])})" for t in forked))
        add("Kafka", "drain ≥ 1 × Confluent's Parallel Consumer (64 and 512 workers; 1 and 10 ms handlers)",
            [(t["ratio"], t["met"]) for t in kt if t["key"] == "pc"], "[Kafka](#kafka)")
        stop = [t for t in kt if t["key"] == "stop"]
        add("Kafka", f"`requestStop()` to the last commit {stop[0]['limit'] if stop else ''} (64 workers, 10 ms "
            "handler)", [(None, t["met"]) for t in stop], "[Kafka](#kafka)",
            measured=", ".join(t["measured"] for t in stop))
        twice = kafka_report.duplicates(kafka_runs)
        if twice:
            rows.append(["", "not a target: records the group's next member handles twice after an abort",
                         " / ".join(str(n) for n in twice), "–", "[Kafka](#kafka)"])
    for t in extra:  # targets that runs of their own judge (their reports write these files)
        rows.append([f"**{t['room']}**" if t["room"] not in rooms else "", t["target"], t["measured"],
                     "**missed**" if t["verdict"] == "missed" else t["verdict"], t["where"]])
        rooms.append(t["room"])
    if not rows:
        return ""
    runs_text = []
    if meta:
        runs_text.append(f"the queue and the pool beside the bare fork, `{meta['command']}` at {meta['commit']} "
                         f"({meta['started'][:10]})")
    if peers_meta:
        runs_text.append(f"the pool beside the peers, `{peers_meta['command']}` at {peers_meta['commit']} "
                         f"({peers_meta['started'][:10]})")
    if durable_meta:
        runs_text.append(f"the job table, `{durable_meta['command']}` at {durable_meta['commit']} "
                         f"({durable_meta['started'][:10]})")
    if kafka_meta:
        runs_text.append(f"Kafka, `{kafka_meta['command']}` at {kafka_meta['commit']} ({kafka_meta['started'][:10]})")
    for t in extra:
        text = f"{t['where'].split(']')[0].lstrip('[')}, {t['run']}"
        if text not in runs_text:  # a file of several targets names its run once
            runs_text.append(text)
    return ("## Every target at a glance\n\n"
            "A time ratio is drain's time over the other side's (below 1 is faster); a rate ratio (jobs/s, records/s) "
            "is drain's rate over the other's (above 1 is faster). A group of configurations shows the range of "
            "its ratios and how many were met; a verdict is decided fork by fork (or round by round) where the "
            "section below says so.\n\n"
            + table(["", "target", "measured", "verdict", "where"], rows, ["l", "l", "l", "l", "l"])
            + "\n\nThe runs: " + "; ".join(runs_text) + ". Every run was on 2 cores; each section names its "
            "machine and load.")


def durable_section(durable, meta):
    """The job table's targets from `benchmarks/run durable`; its tables are in benchmarks/results/durable.md."""
    rows = [[t["label"], t["limit"], t["measured"], t["met"]]
            for t in durable_report.targets(durable, durable_report.machine_cores(meta))]
    if not rows:
        return ""
    return ("## The job table\n\n"
            f"Issues 21's and 41's targets, from `{meta['command']}` at commit {meta['commit']} ({meta['started'][:10]}): jobs through "
            "a `JobTable` on the embedded PostgreSQL and on H2 beside a plain claim-handle-acknowledge loop, and the "
            "settlement hook's cost on the in-memory pool (the per-fork means beside each; where the forks of the two "
            "sides overlap, the ratio is within the run's noise). Every configuration, by dialect, workers and claim "
            "batch: [`benchmarks/results/durable.md`](benchmarks/results/durable.md). Kills of a process over a job "
            "table, and what they cost in duplicates: [`benchmarks/results/heavy-runs.md`]"
            "(benchmarks/results/heavy-runs.md).\n\n"
            + table(["target", "limit", "measured", "met"], rows, ["l", "r", "l", "c"]))


def kafka_section(kafka_runs, meta):
    """The Kafka source's targets from `benchmarks/run kafka`; its tables are in benchmarks/results/kafka.md."""
    rows = [[t["label"], t["limit"], t["measured"], t["met"]] for t in kafka_report.targets(kafka_runs)]
    if not rows:
        return ""
    return ("## Kafka\n\n"
            f"Issue 22's targets, from `{meta['command']}` at commit {meta['commit']} ({meta['started'][:10]}): drain's "
            "`KafkaSource` under a `WorkerPool` beside a plain `KafkaConsumer` loop and Confluent's Parallel Consumer, "
            "each run in a JVM of its own against a broker in another. The one-worker target is left missed "
            "([decision 0049](specs/decisions/0049-the-one-worker-kafka-target-is-left-missed.md)). Records per second "
            "at every width and handler, the time between two handler calls at one worker, the time from "
            "`requestStop()` to the last commit and the duplicates after an abort: "
            "[`benchmarks/results/kafka.md`](benchmarks/results/kafka.md).\n\n"
            + table(["target", "limit", "measured", "met"], rows, ["l", "r", "l", "c"]))


ARCHIVES = [
    ("full-946a6dc.md", "the full run before the watchdog, the settlement hook and decision 0046 (2026-12-02)"),
    ("full-950c19b.md", "the full run of the queue change that was reverted (decision 0024)"),
    ("full-79b39ce.md", "the full run before the pool was rebuilt around a structured run"),
    ("durable.md", "the job table and the settlement hook, every configuration (`benchmarks/run durable`)"),
    ("kafka.md", "Kafka, every configuration, with the time between handler calls (`benchmarks/run kafka`)"),
    ("service.md", "a service: the scenario, the keep-going cost and SIGTERM, round by round "
     "(`benchmarks/run service`)"),
    ("service-5rounds-8b0ab16.md", "the same, 5 rounds at 8b0ab16 (before the restart loop was added), beside the "
     "lead's tests (load 1 to 8.5)"),
    ("heavy-runs.md", "the heavy test runs: properties, kill -9 over a job table and over Kafka, mutation"),
    ("jobtable-kills-postgres-heavy.md", "kill -9 over a job table on PostgreSQL, kill by kill"),
    ("jobtable-kills-h2-heavy.md", "the same on H2"),
    ("kafka-kills-heavy.md", "kill -9 over Kafka, kill by kill"),
    ("jobtable-throughput-rough.md", "a first rough throughput run of the job table"),
    ("decision-figures.md", "the figures measured for the decision records, a section per decision"),
]


def archives_section(results_dir):
    """The other reports under benchmarks/results/, those that are there."""
    import os
    rows = [f"- [`benchmarks/results/{name}`](benchmarks/results/{name}): {what}" for name, what in ARCHIVES
            if results_dir is None or os.path.exists(os.path.join(results_dir, name))]
    if not rows:
        return ""
    return ("## Other runs and archives\n\n"
            "Hand-written or generated by their own runs, each naming its commit and date; figures from different "
            "hosts or commits do not compare.\n\n" + "\n".join(rows))


def _load_json(path):
    with open(path) as f:
        return json.load(f)


def _module(name, path):
    """A sibling report script as a module (benchmarks/kafka/report.py shares this file's name)."""
    import importlib.util
    import os
    spec = importlib.util.spec_from_file_location(name, os.path.join(os.path.dirname(os.path.abspath(__file__)), path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _targets(paths):
    """The targets of the --target-file files: each holds one target (an object) or several (a list of them)."""
    out = []
    for path in paths:
        loaded = _load_json(path)
        out.extend(loaded if isinstance(loaded, list) else [loaded])
    return out


def main(argv):
    global durable_report, kafka_report
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--meta", help="the meta JSON that benchmarks/run writes for the queue and pool groups")
    parser.add_argument("--notes", help="hand-written notes (markdown) to include after the targets")
    parser.add_argument("--heap", help="the JSON that benchmarks/run heap writes (HeapRun)")
    parser.add_argument("--peers", action="append", default=[], help="JMH JSON of PeersBench (benchmarks/run peers)")
    parser.add_argument("--peers-meta", help="the meta JSON of the peers run")
    parser.add_argument("--peers-notes", help="hand-written notes (markdown) to include after the peer tables")
    parser.add_argument("--durable", action="append", default=[],
                        help="JMH JSON of benchmarks/run durable (JobTableBench, SettlementBench)")
    parser.add_argument("--durable-meta", help="the meta JSON of the durable run")
    parser.add_argument("--kafka-runs", help="the runs of benchmarks/run kafka (one JSON line each)")
    parser.add_argument("--kafka-meta", help="the meta JSON of the Kafka run")
    parser.add_argument("--archives", help="the results folder whose other reports the last section lists")
    parser.add_argument("--target-file", action="append", default=[],
                        help="the target(s) a run of its own judged (kafka-cap-target.json, peers-load-target.json, "
                             "service-target.json: an object, or a list of them)")
    parser.add_argument("results", nargs="*", help="JMH JSON result files of the queue and pool groups")
    args = parser.parse_args(argv)
    results = load(args.results)
    peers = load(args.peers)
    if not results and not peers:
        sys.exit("report.py: no results in " + ", ".join(args.results + args.peers))
    if (results and not args.meta) or (peers and not args.peers_meta):
        sys.exit("report.py: every group of results needs its meta file (--meta, --peers-meta)")
    if (args.durable and not args.durable_meta) or (args.kafka_runs and not args.kafka_meta):
        sys.exit("report.py: the durable and Kafka results need their meta files (--durable-meta, --kafka-meta)")
    durable_report = _module("durable_report", "durable_report.py")
    kafka_report = _module("kafka_report", "kafka/report.py")
    durable = load(args.durable)
    kafka_runs = kafka_report.load(args.kafka_runs) if args.kafka_runs else {}
    meta = _load_json(args.meta) if results else None
    peers_meta = _load_json(args.peers_meta) if peers else None
    durable_meta = _load_json(args.durable_meta) if durable else None
    kafka_meta = _load_json(args.kafka_meta) if kafka_runs else None
    parts = [
        "# Benchmarks\n\n"
        "<!-- Generated by benchmarks/report.py from benchmarks/results/; edit benchmarks/NOTES.md and "
        "benchmarks/PEERS.md, not this file, and re-run benchmarks/run. -->\n\n"
        "What drain's queue, pool and durable adapters cost beside what a Java user would pick instead, and "
        "whether each meets its target.",
        glance_section(results, meta, peers, peers_meta, durable, durable_meta, kafka_runs, kafka_meta,
                       _targets(args.target_file)),
        "## How to read the figures\n\n"
        "drain's `ShutdownQueue` and `WorkerPool` measured side by side with what a Java user would pick instead: "
        "the JDK's queues, jox's `Channel`, a bare `StructuredTaskScope` fork, `Gatherers.mapConcurrent`, the "
        "executors and Reactor, each group in one run. "
        "Scores are JMH's means; `±` is JMH's 99.9% confidence half-width where it gives one (few iterations "
        "make it wide). A ratio is this score over the baseline's score in the same run: above 1 is slower. "
        "`CPU ns/item` is the CPU time the whole benchmark JVM used per item (all its threads: the benchmark's, "
        "the virtual threads' carriers, JIT, GC; `benchmarks/.../CpuTimeProfiler`): on a machine shared with "
        "other work the wall-clock score grows with the others' load, the CPU time much less, so the two "
        "together say what an operation costs and how much of the wall time was waiting. The durable adapters "
        "have runs of their own, summed up in their sections and reported in full under `benchmarks/results/`.",
    ]
    if peers:
        peer_notes = None
        if args.peers_notes:
            with open(args.peers_notes) as f:
                peer_notes = f.read().strip()
        parts.append(peers_section(peers, peers_meta, peer_notes))
    if durable:
        parts.append(durable_section(durable, durable_meta))
    if kafka_runs:
        parts.append(kafka_section(kafka_runs, kafka_meta))
    if results:
        parts += [run_section(results, meta), targets_section(results)]
        if args.notes:
            with open(args.notes) as f:
                parts.append(f.read().strip())
        parts += [handoff_section(results), fastpath_section(results), mpmc_section(results),
                  wakeup_section(results), pool_section(results), ladder_section(results),
                  allocation_section(results)]
        if args.heap:
            with open(args.heap) as f:
                parts.append(heap_section(json.load(f)))
    if args.archives:
        parts.append(archives_section(args.archives))
    sys.stdout.write("\n\n".join(p for p in parts if p) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
