# explain: attribution methods, metrics, the papers' explainers.
versusinclude_HEADERS += include/versus/explain.h include/versus/method.h include/versus/metrics.h include/versus/evaluate.h include/versus/attribute_run.h
noinst_HEADERS += explain/internal.h explain/lstsq.h explain/evaluate_internal.h explain/output_choice.h
libversus_la_SOURCES += explain/registry.c explain/explain.c explain/attribute.c explain/quadrature.c \
	explain/saliency.c explain/input_x_gradient.c explain/integrated_gradients.c explain/smoothgrad.c \
	explain/expected_gradients.c explain/gradient_shap.c explain/deeplift.c explain/occlusion.c explain/gradcam.c explain/shapley.c \
	explain/kernel_shap.c explain/lime.c explain/integrated_hessians.c explain/metrics.c \
	explain/module_fn.c explain/output_score.c explain/baselines.c explain/lstsq.c \
	explain/guided_backprop.c explain/guided_gradcam.c explain/lrp.c explain/feature_ablation.c \
	explain/shapley_sampling.c explain/noise_tunnel.c explain/layer_attribution.c explain/layer_site.c \
	explain/metrics_complexity.c explain/metrics_localisation.c explain/metrics_robustness.c explain/metrics_axioms.c \
	explain/evaluate.c explain/evaluate_rows.c explain/evaluate_interactions.c explain/attribute_run.c
if HAVE_CHECK
check_PROGRAMS += tests/test_attribute
TESTS += tests/test_attribute
check_PROGRAMS += tests/test_metrics
TESTS += tests/test_metrics
endif
include $(top_srcdir)/explain/snx.mk
include $(top_srcdir)/explain/games.mk
include $(top_srcdir)/explain/cem.mk
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
libversus_la_SOURCES += explain/interactions_report.c
# the new methods: known answers (Check), and Captum's definitions in PyTorch through the CLI
if HAVE_CHECK
check_PROGRAMS += tests/test_breadth tests/test_quantus
TESTS += tests/test_breadth tests/test_quantus
endif
TESTS += tests/torch_captum.sh tests/cli_breadth.sh
EXTRA_DIST += tests/torch_captum.sh tests/torch_captum.py tests/cli_breadth.sh
include $(top_srcdir)/explain/svae.mk
