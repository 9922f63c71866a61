# explain/snx.mk: SNX and its baselines (Siamese network explanations).
versusinclude_HEADERS += include/versus/snx.h include/versus/optimize.h
noinst_HEADERS += explain/snx_internal.h
libversus_la_SOURCES += explain/optimize.c explain/snx_task.c explain/snx_objective.c explain/snx_explain.c \
	explain/snx_des.c explain/snx_pg.c explain/snx_eval.c explain/snx_stats.c explain/snx_module.c \
	explain/snx_methods.c explain/snx_pair.c
if HAVE_CHECK
check_PROGRAMS += tests/test_snx
TESTS += tests/test_snx
endif
if HAVE_CHECK
check_PROGRAMS += tests/test_optimize
TESTS += tests/test_optimize
endif
