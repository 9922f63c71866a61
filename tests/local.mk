# tests: the engine's own suites (each area lists its suites in its own fragment).
noinst_HEADERS += tests/vs_check.h tests/gradcheck.h tests/snx_models.h tests/explain_call.h
if HAVE_CHECK
check_PROGRAMS += tests/test_core tests/test_ops tests/test_mlp_reference tests/test_norm
TESTS += tests/test_core tests/test_ops tests/test_mlp_reference tests/test_norm
endif
# Hostile inputs: the corpus under tests/hostile/ (made by make_corpus.py) and the probe's cases;
# round 2 (cli_hostile2.sh): forged journals, parts and checkpoints (forge.py), planted links.
TESTS += tests/cli_hostile.sh tests/cli_hostile2.sh
EXTRA_DIST += tests/cli_hostile.sh tests/cli_hostile2.sh tests/german_data.awk tests/hostile

# report_chromium.sh keeps its screenshots for a person to look at; make clean removes them.
clean-local:
	-rm -rf report_chromium.dir docs_formats.dir example_evaluate.dir

# docs/formats/ kept current: model.md's examples load and predict, every format id is documented.
check_PROGRAMS += tests/docs_model_tool
TESTS += tests/docs_formats.sh
EXTRA_DIST += tests/docs_formats.sh

# docs/example_evaluate.c, built against the just-built library, reproduces a `versus evaluate` run.
check_PROGRAMS += tests/example_evaluate
tests_example_evaluate_SOURCES = docs/example_evaluate.c
TESTS += tests/example_evaluate.sh
EXTRA_DIST += tests/example_evaluate.sh
