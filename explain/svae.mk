# explain/svae.mk: the SVAE paper's explanations and experiment (Eq. 9 as an explained model, Table 1,
# Figs. 2-7) and its verbs `versus bench svae` and `versus explain svae`.
noinst_HEADERS += explain/experiment_svae.h
libversus_la_SOURCES += explain/svae_explain.c explain/experiment_svae.c explain/experiment_svae_figures.c
versus_SOURCES += cli/bench_svae.c cli/explain_svae.c cli/bench_common.c
TESTS += tests/cli_svae.sh
EXTRA_DIST += tests/cli_svae.sh
