# tests: one Check binary per area; each area's tests are listed here.
noinst_HEADERS += tests/vs_check.h
if HAVE_CHECK
VS_TESTS = tests/test_core
check_PROGRAMS += $(VS_TESTS)
TESTS += $(VS_TESTS)
tests_test_core_SOURCES = tests/test_core.c
tests_test_core_CFLAGS = $(TEST_CFLAGS)
tests_test_core_LDADD = $(TEST_LIBS)
endif
if HAVE_CHECK
check_PROGRAMS += tests/test_ops
TESTS += tests/test_ops
tests_test_ops_SOURCES = tests/test_ops.c tests/gradcheck.h
tests_test_ops_CFLAGS = $(TEST_CFLAGS)
tests_test_ops_LDADD = $(TEST_LIBS)
endif
if HAVE_CHECK
check_PROGRAMS += tests/test_mlp_reference
TESTS += tests/test_mlp_reference
tests_test_mlp_reference_SOURCES = tests/test_mlp_reference.c
tests_test_mlp_reference_CFLAGS = $(TEST_CFLAGS)
tests_test_mlp_reference_LDADD = $(TEST_LIBS)
endif
