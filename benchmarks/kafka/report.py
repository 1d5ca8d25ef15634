#!/usr/bin/env python3
"""Turns the runs of benchmarks/kafka/run (one JSON line each) into benchmarks/results/kafka.md.

    python3 benchmarks/kafka/report.py --meta benchmarks/results/kafka-meta.json \
        benchmarks/results/kafka-runs.jsonl > benchmarks/results/kafka.md

Standard library only, and deterministic. Every figure is the mean of the rounds, with each round's
figure beside it, and a ratio is drain's mean over the other's in the same run (above 1: drain is
faster). A target is met only where every round of drain is at or above every round of the other
(the rounds do not overlap), or by the means, said so, where they do.
"""

import argparse
import json
import statistics
import sys
from collections import defaultdict

STOP_TARGET_MS = 1000  # plus the slowest in-flight handler
BESIDE = {"plain": "plain loop", "plain-virtual": "plain loop on a virtual thread",
          "plain-forked": "plain loop, each handler forked in a scope", "pc": "Parallel Consumer"}


def fmt(x, digits=3):
    if x is None:
        return "–"
    if x == 0:
        return "0"
    import math
    decimals = max(0, digits - 1 - int(math.floor(math.log10(abs(x)))))
    return f"{round(x, decimals):,.{decimals}f}"


def table(header, rows, align):
    marks = {"l": "---", "r": "--:", "c": ":-:"}
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(marks[a] for a in align) + "|"]
    out.extend("| " + " | ".join(str(c) for c in row) + " |" for row in rows)
    return "\n".join(out)


def load(path):
    runs = defaultdict(list)
    for line in open(path):
        line = line.strip()
        if line:
            r = json.loads(line)
            runs[(r["variant"], r["workers"], r["handler_ms"])].append(r)
    return runs


def rates(runs, key):
    return [r["records_per_s"] for r in runs.get(key, [])]


STOLEN_MARK_S = 0.1  # a round whose JVM lost more CPU than this to the hypervisor is marked


def rounds(runs, key):
    """Each round's records per second, marked † where the hypervisor took more than STOLEN_MARK_S."""
    return " / ".join(fmt(r["records_per_s"]) + ("†" if (r.get("stolen_s") or 0) > STOLEN_MARK_S else "")
                      for r in runs.get(key, []))


def mean(xs):
    return statistics.mean(xs) if xs else None


def compare(runs, variant, other, workers, ms):
    a, b = rates(runs, (variant, workers, ms)), rates(runs, (other, workers, ms))
    if not a or not b:
        return None
    return {"a": a, "b": b, "ratio": mean(a) / mean(b), "apart": min(a) >= max(b) or max(a) <= min(b)}


def throughput_section(runs):
    rows = []
    for ms in [0, 1, 10]:
        for workers, other in [(1, "plain"), (1, "plain-virtual"), (1, "plain-forked"), (8, "pc"), (64, "pc"), (512, "pc")]:
            c = compare(runs, "drain", other, workers, ms)
            if c is None:
                continue
            cpu_a = mean([r["cpu_s"] / r["records"] * 1e6 for r in runs[("drain", workers, ms)]])
            cpu_b = mean([r["cpu_s"] / r["records"] * 1e6 for r in runs[(other, workers, ms)]])
            ideal = "–" if ms == 0 else fmt(workers * 1000 / ms)
            rows.append([f"{ms} ms" if ms else "no-op", workers, ideal,
                         f"{fmt(mean(c['a']))} ({rounds(runs, ('drain', workers, ms))})",
                         BESIDE[other],
                         f"{fmt(mean(c['b']))} ({rounds(runs, (other, workers, ms))})",
                         f"{c['ratio']:.2f}×" + ("" if c["apart"] else " (rounds overlap)"),
                         f"{fmt(cpu_a)} / {fmt(cpu_b)}"])
    return ("## Records per second, end to end\n\n"
            "From the first record handled until the group's commits cover every record (read through `Admin` every "
            "10 ms): records per second, the mean of the rounds and each round's. The handler sleeps 1 or 10 ms, or "
            "returns at once; the ideal is workers ÷ handler time. The ratio is drain's mean over the other's (above 1: "
            "drain is faster). CPU µs per record: the harness JVM's own (drain's / the other's), not the broker's. "
            "The plain loop runs on a platform thread; beside it, the same loop on a virtual thread, where drain's "
            "handlers run: a virtual thread's `Thread.sleep` wakes through the JDK's unparker and a carrier thread, "
            "which costs a 1 ms handler more than a platform thread's sleep, and that part of the gap is not drain's; "
            "and the same loop on a virtual thread that forks each handler call into a `StructuredTaskScope` of its "
            "own and joins it, as a pool that runs every attempt on a fresh thread in a scope of its own (WP-3, WP-9) does "
            "per record (decision 0048). A round marked † lost more than "
            f"{STOLEN_MARK_S:g} s of CPU to the hypervisor while its JVM ran (`/proc/stat`'s steal; older runs "
            "did not record it): such a round is slower, drain's more than a plain loop's.\n\n"
            + table(["handler", "workers", "ideal records/s", "drain", "beside", "its records/s", "ratio", "CPU µs/record"],
                    rows, ["l", "r", "r", "r", "l", "r", "r", "r"]))


ONE_WORKER = ["plain", "plain-virtual", "plain-forked", "drain"]


def gaps_section(runs):
    """The time between two handler calls at one worker, where the runs recorded it."""
    rows = []
    for ms in [0, 1, 10]:
        cells = []
        for variant in ONE_WORKER:
            rs = [r for r in runs.get((variant, 1, ms), []) if r.get("gap_us_p50") is not None]
            if not rs:
                cells.append("–")
                continue
            p50s = [r["gap_us_p50"] for r in rs]  # recorded to 0.1 µs: shown to 0.1 µs
            cells.append(f"{mean(p50s):,.1f} ({' / '.join(f'{x:,.1f}' for x in p50s)}); "
                         f"p90 {mean([r['gap_us_p90'] for r in rs]):,.1f}")
        if any(c != "–" for c in cells):
            rows.append([f"{ms} ms" if ms else "no-op"] + cells)
    if not rows:
        return ""
    return ("## Between two handler calls, one worker\n\n"
            "From one handler call's return to the next one's start, in µs: the mean of the rounds' medians, each "
            "round's median, and the mean of their 90th percentiles. For the plain loop it is the loop's own step "
            "(and, once per poll, the poll and its `commitSync()`); for the loop that forks, also a thread started in "
            "a scope and joined; for drain, also the pool's own hand-offs: the worker woken by the attempt's end, "
            "the result handed to the consumer, the settlement offered, the next item taken from the intake "
            "(decisions 0048 and 0049). At 1 ms a record takes about 1,100 µs, so 11 µs are 1 %. The medians "
            "are not the whole difference between the loops: the rest is in the handlers' own sleeps (a virtual "
            "thread's timed wake-up) and in the slow tail.\n\n"
            + table(["handler"] + [BESIDE[v] if v != "drain" else "drain" for v in ONE_WORKER], rows,
                    ["l", "r", "r", "r", "r"]))


def stop_section(runs):
    stops = [r for key, rs in runs.items() if key[0] == "drain-stop" for r in rs]
    aborts = [r for key, rs in runs.items() if key[0] == "drain-abort" for r in rs]
    parts = []
    if stops and any(r["stop_to_last_commit_ms"] is not None for r in stops):
        ms = [r["stop_to_last_commit_ms"] for r in stops if r["stop_to_last_commit_ms"] is not None]
        parts.append("## From `requestStop()` to the last commit\n\n"
                     f"drain at 64 workers, a 10 ms handler, `requestStop()` two seconds in; the run ends once every "
                     f"settlement is answered, after its last commit: {', '.join(fmt(x) for x in ms)} ms "
                     f"(max {fmt(max(ms))} ms).")
    if aborts:
        rows = [[r["round"], r["handled"], r["handled_next"], r["twice_with_a_source"], r["twice_with_a_plain_consumer"]]
                for r in aborts]
        parts.append("## Duplicates after an abort\n\n"
                     "drain at 64 workers, a 10 ms handler, `abort()` two seconds in; then the group's next member (a "
                     "`KafkaSource`, which reads the commit's metadata) handles what is left. Handled twice: by the next "
                     "member; and by a plain consumer of the group, which reads from the watermark and so repeats the done "
                     "offsets above it (counted from the commit, not run). Every record is handled by one or the other.\n\n"
                     + table(["round", "handled before the abort", "handled by the next member", "twice, next member a source",
                              "twice, a plain consumer"], rows, ["r", "r", "r", "r", "r"]))
    return "\n\n".join(parts)


def targets(runs):
    """Issue 22's targets, judged from this run: a dict per row (label, limit, measured, met, and for a
    ratio the comparison itself), the row beside the first target included, which is not a target."""
    rows = []

    def measured(c):
        decided = "by every round" if c["apart"] else "by the means (rounds overlap)"
        return f"{c['ratio']:.2f}× ({decided})"

    def judge(label, c, limit, key):
        if c is None:
            return
        met = c["ratio"] >= limit  # measured() says whether every round or only the means decided it
        rows.append({"key": key, "label": label, "limit": f"≥ {limit:g} ×", "measured": measured(c),
                     "met": "yes" if met else "**no**", "ratio": c["ratio"]})

    judge("drain ÷ plain loop, 1 worker, 1 ms handler", compare(runs, "drain", "plain", 1, 1), 1.0, "one-worker")
    floor = compare(runs, "plain-forked", "plain", 1, 1)
    if floor is not None:
        rows.append({"key": "one-worker-forked",
                     "label": "beside it, not a target: the plain loop forking each handler in a scope ÷ the plain "
                              "loop, 1 worker, 1 ms handler (the price of WP-3 and WP-9, decision 0048)",
                     "limit": "–", "measured": measured(floor), "met": "–", "ratio": floor["ratio"]})
    for workers in [64, 512]:
        for ms in [1, 10]:
            judge(f"drain ÷ Parallel Consumer, {workers} workers, {ms} ms handler",
                  compare(runs, "drain", "pc", workers, ms), 1.0, "pc")
    stops = [r["stop_to_last_commit_ms"] for key, rs in runs.items() if key[0] == "drain-stop" for r in rs
             if r["stop_to_last_commit_ms"] is not None]
    if stops:
        limit = STOP_TARGET_MS + 10
        rows.append({"key": "stop", "label": "`requestStop()` to the last commit, 64 workers, 10 ms handler",
                     "limit": f"≤ {limit} ms", "measured": f"max {fmt(max(stops))} ms",
                     "met": "yes" if max(stops) <= limit else "**no**", "max_ms": max(stops), "limit_ms": limit})
    return rows


def duplicates(runs):
    """What the group's next member handled twice after an abort, per round (not a target)."""
    return [r["twice_with_a_source"] for key, rs in runs.items() if key[0] == "drain-abort" for r in rs]


def targets_section(runs):
    rows = [[t["label"], t["limit"], t["measured"], t["met"]] for t in targets(runs)]
    if not rows:
        return ""
    return ("## Targets\n\nIssue 22's, from this run.\n\n"
            + table(["target", "limit", "measured", "met"], rows, ["l", "r", "l", "c"]))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--meta", help="the run's meta JSON that benchmarks/kafka/run writes (started, finished, "
                                       "commit, command, java); or give each with the flags below")
    for flag in ["--started", "--finished", "--commit", "--command", "--java"]:
        parser.add_argument(flag)
    parser.add_argument("runs")
    args = parser.parse_args(argv)
    if args.meta:
        with open(args.meta) as f:
            for key, value in json.load(f).items():
                if getattr(args, key, None) is None:
                    setattr(args, key, value)
    missing = [flag for flag in ["started", "finished", "commit", "command", "java"] if getattr(args, flag) is None]
    if missing:
        sys.exit("report.py: no " + ", ".join(missing) + " (give --meta, or the flags)")
    runs = load(args.runs)
    if not runs:
        sys.exit("report.py: no runs in " + args.runs)
    rounds = max(r["round"] for rs in runs.values() for r in rs)
    header = ("# Kafka: drain beside a plain loop and Parallel Consumer\n\n"
              "<!-- Generated by benchmarks/kafka/report.py from benchmarks/results/kafka-runs.jsonl; re-run "
              "benchmarks/run kafka. -->\n\n"
              + table(["", ""], [
                  ["command", f"`{args.command}`"],
                  ["date", f"{args.started} – {args.finished}"],
                  ["drain", f"commit {args.commit}"],
                  ["JDK", args.java],
                  ["rounds", f"{rounds}; in each, the variants of one configuration run one after the other, in an order "
                             "that alternates between rounds"],
                  ["broker", "one KRaft node (`LocalKafka`) in a JVM of its own; every run in a JVM of its own, on a fresh "
                             "topic of 8 partitions of 100-byte records, written before the measurement"],
                  ["drain", "`KafkaSource` (buffer max(1,024, 2 × workers)) and a `WorkerPool` of the workers, queue size = "
                            "workers, settlement batches of 512"],
                  ["plain loop", "one `KafkaConsumer`: poll, handle each record in turn, `commitSync()` per poll; on a "
                                 "platform thread, on a virtual thread, and on a virtual thread forking each handler "
                                 "call into a scope of its own"],
                  ["records", "about 3 s of the ideal rate (workers ÷ handler time; 20,000 or 50,000 with a no-op "
                              "handler); at one worker with a 1 or 10 ms handler, 15 s, where the JIT is still compiling "
                              "a few seconds in (decision 0048)"],
                  ["warm-up", "before the measured run, each JVM runs a quarter as many records (at least 500) on a "
                              "topic and group of its own, unmeasured: the JIT's turn"],
                  ["Parallel Consumer", "`io.confluent.parallelconsumer:parallel-consumer-core:0.5.3.3` with "
                                        "`kafka-clients` 3.9.1, `UNORDERED`, `maxConcurrency` = workers, its default "
                                        "commit mode and interval"],
              ], ["l", "l"]))
    parts = [header, targets_section(runs), throughput_section(runs), gaps_section(runs), stop_section(runs)]
    sys.stdout.write("\n\n".join(p for p in parts if p) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
