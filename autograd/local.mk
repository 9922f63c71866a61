# autograd: sources of libversus (or the program) and their headers.
versusinclude_HEADERS += include/versus/versus.h include/versus/error.h include/versus/rng.h include/versus/tensor.h include/versus/ops.h
noinst_HEADERS += autograd/internal.h
libversus_la_SOURCES += autograd/error.c autograd/mem_budget.c autograd/rng.c autograd/version.c autograd/tensor.c autograd/graph.c \
	autograd/ops_elementwise.c autograd/ops_reduce.c autograd/ops_shape.c autograd/ops_matmul.c autograd/ops_nn.c autograd/ops_norm.c
include $(top_srcdir)/autograd/kernels.mk
include $(top_srcdir)/autograd/conv.mk
if HAVE_CHECK
check_PROGRAMS += tests/test_vec_kernels
TESTS += tests/test_vec_kernels
endif
