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
TESTS += tests/cli_shard.sh tests/cli_shard_kill.sh
EXTRA_DIST += tests/cli_shard.sh tests/cli_shard_kill.sh
# every bench's and the demo's report, byte for byte against tests/golden/bench/
TESTS += tests/bench_golden.sh
EXTRA_DIST += tests/bench_golden.sh tests/golden_normalise.py
