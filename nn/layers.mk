# nn/layers.mk: layers, module tree, initialisers, optimizers, architectures.
versusinclude_HEADERS += include/versus/nn.h include/versus/composite.h include/versus/gnn.h include/versus/optim.h include/versus/arch.h include/versus/model.h
noinst_HEADERS += nn/internal.h nn/composite_internal.h
libversus_la_SOURCES += nn/module.c nn/spec.c nn/spec_shape.c nn/build.c nn/layers.c nn/init.c nn/forward.c nn/forward_boxes.c nn/path_grads.c \
	nn/gnn_batch.c nn/gnn_layers.c nn/composite.c nn/composite_json.c nn/composite_ops.c nn/onnx_import.c nn/arch.c nn/optim.c nn/lr_schedule.c nn/clip_grad.c nn/model_io.c

if HAVE_CHECK
check_PROGRAMS += tests/test_nn tests/test_optim tests/test_model_io tests/test_path_grads tests/test_forward_boxes
TESTS += tests/test_nn tests/test_optim tests/test_model_io tests/test_path_grads tests/test_forward_boxes
endif

# composite models: the Check suite, and the PyTorch round trip (a versus-side tool and a script).
check_PROGRAMS += tests/composite_tool
TESTS += tests/torch_composite.sh
EXTRA_DIST += tests/torch_composite.sh tests/torch_composite.py tests/torch_io.py
if HAVE_CHECK
check_PROGRAMS += tests/test_composite
TESTS += tests/test_composite
endif

# ONNX import (the reader is datasets/io/onnx.c): committed fixtures and hostile files in a Check suite,
# and the torchvision families exported by PyTorch in the test itself (skipped without torch).
TESTS += tests/torch_onnx.sh
EXTRA_DIST += tests/torch_onnx.sh tests/torch_onnx.py tests/onnx/make_fixtures.py tests/onnx/small_cnn.onnx tests/onnx/small_cnn_x.npy \
	tests/onnx/small_cnn_y.npy tests/onnx/mlp.onnx tests/onnx/mlp_x.npy tests/onnx/mlp_y.npy
if HAVE_CHECK
check_PROGRAMS += tests/test_onnx
TESTS += tests/test_onnx
endif
