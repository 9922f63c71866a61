/* bench/perf/cli.c - `versus bench perf`: the engine's timings; the program is bench/perf/main.c (also
 * bench/vs_bench), which parses its own flags. */
#include "bench/perf/perf.h"
#include "bench/bench.h"

static int run_perf(int argc, char **argv) { return vs_bench_perf("versus bench perf", argc, argv); }

const vs_bench vs_benchmark_perf = {
    "perf",
    "time the kernels, training steps and explainers of the engine (no report)",
    "versus bench perf [--threads 1,2] [--filter SUBSTR,...] [--reps N] [--json FILE] [--list] [--rss]\n"
    "                         [--clock wall|cpu]",
    "perf times the engine: peak FMA throughput, SGEMM (square 64-1024 and the linear layers' skinny\n"
    "shapes), single convolutions of the papers' models (forward, and forward + backward), one training\n"
    "step (forward, loss, backward, Adam) of the papers' models, IG-200, Occlusion-1 and saliency on the\n"
    "GANMEX MNIST classifier, and IG-200 of 16 images on a 784-512-256-10 MLP and on conv-pool-conv-pool-\n"
    "linear-linear; the sweep (suite \"sweep\", names sweep_*): 16 convolutions and 4 small training steps\n"
    "the bench was not tuned on (bench/perf/sweep.c).  Each workload warms up, then reports the\n"
    "median of --reps timed samples (default 15) at each --threads count (default 1 and all cores), as\n"
    "JSON lines and a Markdown table; --list names the workloads, --filter picks them by substring\n"
    "(one ending in $ must end the name: sweep_1x29_32_k5s1_fwd$ leaves out ..._fwdbwd; one starting\n"
    "with ^ must start it: ^vae_mlp_step leaves out dipvae_mlp_step),\n"
    "--json also writes the lines to FILE, --rss ends with the peak resident memory.  With --threads 1,N\n"
    "the thread scaling of sgemm_nn_512 and ganmex_mnist_step is also measured pairwise: 1- and N-thread\n"
    "samples (each after an untimed run) alternate, and the median of their time ratios is printed\n"
    "(a \"scaling\" JSON line).  --clock cpu times with the process's CPU time instead of the wall clock\n"
    "(for one thread on a machine that other programs share); every line says which clock it used.\n"
    "The first line names the kernels' ISA (VERSUS_ISA=scalar|avx2|avx512 forces one) and, on AVX-512,\n"
    "whether the core runs zmm FMAs full-width (Zen 5, Intel) or as two halves (Zen 4): the kernels read\n"
    "their operands and pick Winograd or direct convolutions the way each kind of core is fastest at\n"
    "(the same seed and kind of core give the same results).\n"
    "The same program is bench/vs_bench; `make bench-compare` runs PyTorch on the same workloads (and\n"
    "the whole `versus train` process against a PyTorch script doing the same work) and prints the\n"
    "ratios with the ISA and the measured FMA peak; `make bench-compare-rounds` repeats it (BENCH_ROUNDS, 3)\n"
    "and prints every ratio per round with its median.\n"
    "Kernels: stride-1 2x2, 3x3, 4x4 and 5x5 convolutions of 16 or more channels (dilated ones too) and\n"
    "stride-1 7x7 forwards run as Winograd F(4x4,2x2) / F(4x4,3x3) or F(3x3,3x3) / F(3x3,4x4) / F(2x2,5x5) /\n"
    "F(2x2,7x7) where that is faster, and so do stride-2 4x4, 5x5, 6x6 and 7x7 ones (WGAN-GP's, StarGAN's,\n"
    "GANMEX's) over their four input phases, kernels padded with zero taps to a multiple of the stride\n"
    "(results differ from the direct sums by about 1e-6 of sum |w x|, at most 2.2e-6; IG's path engine keeps\n"
    "the direct sums); VERSUS_CONV=direct keeps the direct kernels (and their bits) everywhere.",
    NULL, /* the harness parses its own flags */
    NULL,
    NULL,
    0,
    NULL,
    NULL,
    run_perf,
    NULL, /* no budgets: its own flags set the sizes */
};
