#!/usr/bin/env python3
"""Groups a JFR recording's execution samples the way benchmarks/NOTES.md shows them.

    jfr print --json --stack-depth 64 --events jdk.ExecutionSample pool1024.jfr > pool1024.json
    python3 benchmarks/profile-frames.py pool1024.json

For each file: the share of samples by innermost frame of drain's own code (lambdas and the
benchmarks' own classes skipped; "(no drain frame)" is the JDK alone, mostly the virtual-thread
scheduler), then by thread, with the thread's number dropped (bench-worker-17 -> bench-worker).
"""
import collections
import json
import re
import sys


def innermost_drain_frame(frames):
    for frame in frames:
        method = frame["method"]
        owner = method["type"]["name"].replace("/", ".")
        if owner.startswith("dev.drain.") and not owner.startswith("dev.drain.bench.") and "$$" not in owner:
            return owner.rsplit(".", 1)[-1] + "." + method["name"]
    return "(no drain frame)"


def main(paths):
    for path in paths:
        with open(path) as f:
            events = json.load(f)["recording"]["events"]
        frames, threads = collections.Counter(), collections.Counter()
        for event in events:
            stack = event["values"]["stackTrace"]
            frames[innermost_drain_frame(stack["frames"] if stack else [])] += 1
            thread = event["values"]["sampledThread"] or {}
            name = thread.get("javaName") or thread.get("osName") or "?"
            threads[re.sub(r"-\d+$", "", name)] += 1
        total = len(events)
        print(f"{path}: {total} samples")
        for name, count in frames.most_common(15):
            print(f"  {100 * count / total:5.1f} %  {name}")
        print("  by thread: " + ", ".join(f"{name} {100 * count / total:.0f} %" for name, count in threads.most_common(8)))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
