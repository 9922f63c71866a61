#!/usr/bin/python3
"""bench/perf/train_process.py - the whole `versus train` process against a PyTorch process doing the same work
(bench/perf/torch_train_process.py: load MNIST, one epoch of the GANMEX classifier, test accuracy).

    train_process.py VERSUS [--threads 1] [--reps 3] [--clock wall|cpu]

Runs the two programs alternately REPS times each and prints one JSON line per side in vs_bench's format
(name "train_process_ganmex", suite "train", impl "versus" or "torch", median_s of the process, "clock"):
wall-clock time, or with --clock cpu the user + system CPU time of the child (meaningful on a shared
machine at 1 thread).  Needs $VERSUS_DATA/mnist; without it, or without torch, says why on stderr and
prints nothing for the missing side.
"""
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

NAME = "train_process_ganmex"


def timed(cmd, env, cpu):
    """Seconds the child took (wall, or user + system CPU) and its exit status."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        print("train_process: %s failed: %s" % (cmd[0], proc.stderr.strip()[-500:]), file=sys.stderr)
    return (used if cpu else wall), proc.returncode, proc.stdout.strip().splitlines()[-1:] or [""]


def main(argv):
    if len(argv) < 2 or argv[1].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    versus, threads, reps, clock = argv[1], 1, 3, "wall"
    i = 2
    while i + 1 < len(argv):
        if argv[i] == "--threads":
            threads = int(argv[i + 1])
        elif argv[i] == "--reps":
            reps = int(argv[i + 1])
        elif argv[i] == "--clock" and argv[i + 1] in ("wall", "cpu"):
            clock = argv[i + 1]
        else:
            print("train_process: unknown flag %s" % argv[i], file=sys.stderr)
            return 2
        i += 2
    data = os.environ.get("VERSUS_DATA", "")
    if not os.path.isfile(os.path.join(data, "mnist", "train10k-images-idx3-ubyte.gz")):
        print("train_process: $VERSUS_DATA/mnist is missing; skipping the whole-process train entry", file=sys.stderr)
        return 0
    env = dict(os.environ, VERSUS_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
               OPENBLAS_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    have_torch = subprocess.run([sys.executable, "-c", "import torch"], stderr=subprocess.DEVNULL).returncode == 0
    if not have_torch:
        print("train_process: %s has no torch; versus only" % sys.executable, file=sys.stderr)
    here = os.path.dirname(os.path.abspath(__file__))
    times = {"versus": [], "torch": []}
    last = {}
    with tempfile.TemporaryDirectory() as out:
        cmds = {"versus": [versus, "train", "--arch", "ganmex-mnist", "--data", "mnist-train", "--test-data", "mnist",
                           "--epochs", "1", "--seed", "1", "--out", os.path.join(out, "model")],
                "torch": [sys.executable, os.path.join(here, "torch_train_process.py"), str(threads), "1"]}
        for _ in range(reps):
            for impl in ("versus", "torch"):
                if impl == "torch" and not have_torch:
                    continue
                secs, status, tail = timed(cmds[impl], env, clock == "cpu")
                if status == 0:
                    times[impl].append(secs)
                    last[impl] = tail[0]
    for impl, ts in times.items():
        if not ts:
            continue
        ts.sort()
        n = len(ts)
        median = ts[n // 2] if n % 2 else 0.5 * (ts[n // 2 - 1] + ts[n // 2])
        print(json.dumps({"name": NAME, "suite": "train", "impl": impl, "threads": threads, "reps": n, "iters": 1,
                          "median_s": median, "min_s": ts[0], "gflops": 0.0, "clock": clock,
                          "result": last.get(impl, "")}, separators=(",", ":")), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
