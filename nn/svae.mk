# nn/svae.mk: the supervised VAEs (SVAE and M2): architectures, shared pieces and their training tasks.
versusinclude_HEADERS += include/versus/svae.h
noinst_HEADERS += nn/svae_internal.h
libversus_la_SOURCES += nn/arch_svae.c nn/svae.c nn/task_svae.c nn/task_m2.c

if HAVE_CHECK
check_PROGRAMS += tests/test_svae
TESTS += tests/test_svae
endif
