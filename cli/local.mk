# cli: sources of libversus (or the program) and their headers.
noinst_HEADERS += cli/cli.h cli/bench.h
versus_SOURCES += cli/main.c cli/args.c cli/data_flags.c cli/cmd_help.c cli/cmd_demo.c cli/cmd_data.c cli/cmd_attribute.c cli/cmd_evaluate.c cli/cmd_explain.c
versus_SOURCES += cli/cmd_bench.c cli/bench_snx.c cli/bench_ganmex.c cli/cmd_report.c
TESTS += tests/cli.sh
EXTRA_DIST += tests/cli.sh tests/cli_lib.sh
TESTS += tests/cli_explain.sh
EXTRA_DIST += tests/cli_explain.sh
TESTS += tests/cli_bench.sh
EXTRA_DIST += tests/cli_bench.sh
TESTS += tests/bench_regression.sh tests/report_chromium.sh
EXTRA_DIST += tests/bench_regression.sh tests/compare_results.py tests/golden tests/report_chromium.sh tests/page_check.py
