#!/usr/bin/env python3
"""The floor of a scripted alternative to `hush eval`: per line, json.loads then json.dumps and
nothing else (no decision at all). Reads FILE, writes one JSON line per input line to stdout, and
prints `lines=N seconds=S lines_per_second=R` to stderr (the loop, from opening the file to the
last write).

    python3 Benchmarks/anchor_json.py stream.jsonl > /dev/null
"""
import json
import sys
import time


def main():
    path = sys.argv[1]
    start = time.perf_counter()
    out = sys.stdout
    loads, dumps = json.loads, json.dumps
    n = 0
    with open(path, "rb") as f:
        for line in f:
            if not line.strip():
                continue
            out.write(dumps(loads(line)))
            out.write("\n")
            n += 1
    out.flush()
    seconds = time.perf_counter() - start
    print("lines=%d seconds=%.3f lines_per_second=%.0f" % (n, seconds, n / seconds), file=sys.stderr)


if __name__ == "__main__":
    main()
