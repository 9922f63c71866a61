# autograd/conv.mk: convolution, pooling and upsampling ops.
libversus_la_SOURCES += autograd/ops_conv.c autograd/conv_direct.c autograd/conv_avx512.c autograd/conv_avx512_wgrad.c autograd/conv_images.c \
	autograd/conv_winograd.c autograd/conv_phases.c autograd/ops_pool.c
noinst_HEADERS += autograd/conv_direct.h autograd/conv_avx512.h autograd/conv_images.h autograd/conv_avx512_simd.h autograd/conv_phases.h autograd/conv_winograd.h
if HAVE_CHECK
check_PROGRAMS += tests/test_conv
TESTS += tests/test_conv
endif
# Pooling with dilation / ceil_mode and conv_transpose2d's wide output_padding, against PyTorch.
if HAVE_CHECK
check_PROGRAMS += tests/test_pool_modes
TESTS += tests/test_pool_modes
endif
# The direct kernels of convolutions with few output channels (conv_direct.c) under every ISA.
if HAVE_CHECK
check_PROGRAMS += tests/test_conv_direct
TESTS += tests/test_conv_direct
endif
# Winograd convolutions against the direct sums: accuracy per F(m, r), every ISA, thread counts.
if HAVE_CHECK
check_PROGRAMS += tests/test_conv_winograd
TESTS += tests/test_conv_winograd
endif
# Strided convolutions as stride-1 convolutions over the stacked input phases (conv_phases.c).
if HAVE_CHECK
check_PROGRAMS += tests/test_conv_phases
TESTS += tests/test_conv_phases
endif
