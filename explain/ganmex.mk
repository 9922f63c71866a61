# explain/ganmex.mk: GANMEX (class-targeted baselines from a StarGAN judged by the explained classifier):
# the task lives in nn/task_ganmex.c, the baselines in explain/baselines.c, the experiment here.
if HAVE_CHECK
check_PROGRAMS += tests/test_ganmex
TESTS += tests/test_ganmex
endif
versusinclude_HEADERS += include/versus/ganmex.h
noinst_HEADERS += explain/experiment_ganmex.h
libversus_la_SOURCES += explain/experiment_ganmex.c explain/experiment_ganmex_report.c
TESTS += tests/cli_ganmex.sh
EXTRA_DIST += tests/cli_ganmex.sh bench/ganmex_identity_torch.py
