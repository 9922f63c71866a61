# explain/svae.mk: the SVAE paper's explanations (Eq. 9 as an explained model) and `versus explain svae`;
# the experiment (Table 1, Figs. 2-7) is bench/svae/.
versusinclude_HEADERS += include/versus/svae_explain.h
libversus_la_SOURCES += explain/svae_explain.c
versus_SOURCES += cli/explain_svae.c
TESTS += tests/cli_svae.sh
EXTRA_DIST += tests/cli_svae.sh
