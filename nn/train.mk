# nn/train.mk: the training loop, checkpoints, and the train / predict verbs.
versusinclude_HEADERS += include/versus/train.h include/versus/task.h include/versus/zoo.h
noinst_HEADERS += nn/train_internal.h nn/gan_internal.h
libversus_la_SOURCES += nn/train.c nn/train_ckpt.c nn/train_data.c nn/train_eval.c nn/train_progress.c nn/train_opts.c \
	nn/train_samples.c nn/task_run.c nn/task_registry.c nn/task_classifier.c nn/task_siamese.c nn/task_vae.c nn/task_gan.c nn/task_ganmex.c nn/zoo.c
versus_SOURCES += cli/cmd_train.c cli/cmd_predict.c

if HAVE_CHECK
check_PROGRAMS += tests/test_train tests/test_tasks
TESTS += tests/test_train tests/test_tasks
endif
TESTS += tests/cli_train.sh tests/cli_resume_kill.sh
EXTRA_DIST += tests/cli_train.sh tests/cli_resume_kill.sh tests/check_data.sh

# Accuracy targets on the real data sets (slow; not part of `make check`): trains the GANMEX MNIST
# classifier and the CEM-MAF Fashion-MNIST shoes classifier with `versus train` and checks the last line.
check-data: versus$(EXEEXT)
	VERSUS_DATA="$${VERSUS_DATA:-$(abs_top_srcdir)/../shared/datasets}" $(SHELL) $(top_srcdir)/tests/check_data.sh ./versus$(EXEEXT)
.PHONY: check-data

# The VAE example against PyTorch (issue 13): one epoch on mnist-train, mean test ELBO of three seeds
# within 2% (slow-ish and needs python3-torch; not part of `make check`).
check-vae: versus$(EXEEXT)
	VERSUS_DATA="$${VERSUS_DATA:-$(abs_top_srcdir)/../shared/datasets}" $(SHELL) $(top_srcdir)/tests/check_vae.sh $(abs_builddir)/versus$(EXEEXT)
.PHONY: check-vae
EXTRA_DIST += tests/check_vae.sh bench/vae_torch.py
