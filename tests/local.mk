# tests: the engine's own suites (each area lists its suites in its own fragment).
noinst_HEADERS += tests/vs_check.h tests/gradcheck.h tests/snx_models.h
if HAVE_CHECK
check_PROGRAMS += tests/test_core tests/test_ops tests/test_mlp_reference tests/test_norm
TESTS += tests/test_core tests/test_ops tests/test_mlp_reference tests/test_norm
endif
