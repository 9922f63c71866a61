# explain/ganmex.mk: GANMEX (class-targeted baselines from a StarGAN judged by the explained classifier):
# the task lives in nn/task_ganmex.c, the baselines in explain/baselines.c, the experiment in bench/ganmex/.
if HAVE_CHECK
check_PROGRAMS += tests/test_ganmex
TESTS += tests/test_ganmex
endif
versusinclude_HEADERS += include/versus/ganmex.h
TESTS += tests/cli_ganmex.sh
EXTRA_DIST += tests/cli_ganmex.sh
