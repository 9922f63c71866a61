# explain: attribution methods, metrics, the papers' explainers.
versusinclude_HEADERS += include/versus/explain.h include/versus/method.h include/versus/metrics.h
noinst_HEADERS += explain/internal.h explain/lstsq.h
libversus_la_SOURCES += explain/registry.c explain/explain.c explain/attribute.c explain/quadrature.c \
	explain/saliency.c explain/input_x_gradient.c explain/integrated_gradients.c explain/smoothgrad.c \
	explain/expected_gradients.c explain/deeplift.c explain/occlusion.c explain/gradcam.c explain/shapley.c \
	explain/kernel_shap.c explain/lime.c explain/integrated_hessians.c explain/metrics.c \
	explain/module_fn.c explain/baselines.c explain/lstsq.c
if HAVE_CHECK
check_PROGRAMS += tests/test_attribute
TESTS += tests/test_attribute
check_PROGRAMS += tests/test_metrics
TESTS += tests/test_metrics
endif
include $(top_srcdir)/explain/snx.mk
include $(top_srcdir)/explain/ganmex.mk
if HAVE_CHECK
check_PROGRAMS += tests/test_explain_module
TESTS += tests/test_explain_module
endif
if HAVE_CHECK
check_PROGRAMS += tests/test_lstsq
TESTS += tests/test_lstsq
endif
if HAVE_CHECK
check_PROGRAMS += tests/test_method
TESTS += tests/test_method
endif
# the papers' experiments: library calls that return a vs_report
versusinclude_HEADERS += include/versus/experiment.h
noinst_HEADERS += explain/experiment_snx.h
libversus_la_SOURCES += explain/experiment_snx.c explain/experiment_snx_report.c explain/experiment_demo.c
