#!/usr/bin/env python3
"""compare_results.py BEFORE.json AFTER.json - every number of two results.json files equal.

Compares the experiment's data (everything but the "report" member, which only the newer format
has) key by key and item by item: numbers must be equal exactly, strings and nulls too.  Timing
fields (wall/train/stage/fit seconds, threads), the command line (its --out differs) and the build's
commit (and "tag", which stamped it by hand before) are skipped.
Prints each difference with its path; exit status 1 when any."""
import json
import sys

SKIP = {"wall_seconds", "train_seconds", "stage1_seconds", "des_seconds", "pg_seconds", "seconds", "command", "commit", "tag", "report", "threads"}


def walk(a, b, path, diffs):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k in SKIP:
                continue
            if k not in a or k not in b:
                diffs.append(f"{path}.{k}: only in {'after' if k in b else 'before'}")
            else:
                walk(a[k], b[k], f"{path}.{k}", diffs)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            diffs.append(f"{path}: {len(a)} items before, {len(b)} after")
        for i, (x, y) in enumerate(zip(a, b)):
            walk(x, y, f"{path}[{i}]", diffs)
    elif a != b or type(a) is not type(b):
        diffs.append(f"{path}: {a!r} before, {b!r} after")


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        before = json.load(f)
    with open(sys.argv[2]) as f:
        after = json.load(f)
    diffs = []
    walk(before, after, "$", diffs)
    for d in diffs[:50]:
        print(d)
    count = sum(1 for _ in numbers(before))
    print(f"compare_results: {count} numbers compared, {len(diffs)} differences")
    return 1 if diffs else 0


def numbers(v):
    if isinstance(v, dict):
        for k, x in v.items():
            if k not in SKIP:
                yield from numbers(x)
    elif isinstance(v, list):
        for x in v:
            yield from numbers(x)
    elif isinstance(v, (int, float)) and not isinstance(v, bool):
        yield v


if __name__ == "__main__":
    sys.exit(main())
