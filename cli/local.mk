# cli: sources of libversus (or the program) and their headers.
noinst_HEADERS += cli/cli.h cli/bench.h cli/cem_cli.h
versus_SOURCES += cli/main.c cli/args.c cli/data_flags.c cli/cmd_help.c cli/cmd_demo.c cli/cmd_data.c cli/cmd_attribute.c cli/cmd_evaluate.c cli/cmd_explain.c
versus_SOURCES += cli/cmd_bench.c cli/bench_perf.c cli/bench_snx.c cli/bench_search.c cli/bench_common.c cli/cmd_report.c cli/cmd_merge.c
versus_SOURCES += cli/run_flags.c cli/explain_pairs.c
versus_SOURCES += cli/cem_flags.c cli/explain_cem.c cli/bench_cem.c
versus_SOURCES += cli/bench_ganmex.c
TESTS += tests/cli.sh
EXTRA_DIST += tests/cli.sh tests/cli_lib.sh
TESTS += tests/cli_explain.sh
TESTS += tests/cli_cem.sh
EXTRA_DIST += tests/cli_cem.sh
EXTRA_DIST += tests/cli_explain.sh
TESTS += tests/cli_bench.sh
EXTRA_DIST += tests/cli_bench.sh
TESTS += tests/bench_regression.sh tests/report_chromium.sh
EXTRA_DIST += tests/bench_regression.sh tests/compare_results.py tests/golden tests/report_chromium.sh tests/page_check.py
TESTS += tests/cli_shard.sh tests/cli_shard_kill.sh tests/cluster_recipe.sh
EXTRA_DIST += tests/cli_shard.sh tests/cli_shard_kill.sh tests/cluster_recipe.sh tests/slurm_cluster.sh
# docs/CLUSTER.md's Slurm recipe against a real one-node Slurm started here (root; Debian: apt-get
# install slurm-wlm munge); skipped with the reason when either is absent.  Not part of `make check`.
check-slurm: versus
	@VERSUS_DATA="$${VERSUS_DATA:-$(abs_top_srcdir)/../shared/datasets}" sh $(srcdir)/tests/cluster_recipe.sh --slurm; \
	 rc=$$?; if [ $$rc -eq 77 ]; then echo "check-slurm: SKIPPED"; exit 0; fi; exit $$rc
.PHONY: check-slurm
