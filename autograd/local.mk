# autograd: sources of libversus (or the program) and their headers.
versusinclude_HEADERS += include/versus/versus.h include/versus/error.h include/versus/rng.h include/versus/tensor.h include/versus/ops.h
noinst_HEADERS += autograd/internal.h autograd/alloc.h autograd/vmath.h
libversus_la_SOURCES += autograd/error.c autograd/alloc.c autograd/mem_budget.c autograd/rng.c autograd/version.c autograd/tensor.c autograd/graph.c \
	autograd/ops_elementwise.c autograd/ops_reduce.c autograd/ops_shape.c autograd/ops_matmul.c autograd/ops_nn.c autograd/ops_norm.c
include $(top_srcdir)/autograd/kernels.mk
include $(top_srcdir)/autograd/conv.mk
if HAVE_CHECK
check_PROGRAMS += tests/test_vec_kernels tests/test_vmath
TESTS += tests/test_vec_kernels tests/test_vmath
endif
# Out of memory anywhere in the engine (the allocation-failure hook of autograd/alloc.h).
if HAVE_CHECK
check_PROGRAMS += tests/test_fault
TESTS += tests/test_fault
endif
# The shared library exports only vs_ symbols (see VS_EXPORTED_PRIVATE in Makefile.am).
TESTS += tests/exports.sh
EXTRA_DIST += tests/exports.sh
# the commit the build compiles in (Makefile.am: build_commit.h; shipped so a tarball can rebuild it)
EXTRA_DIST += autograd/build_commit.sh
