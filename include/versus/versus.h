/* versus/versus.h - everything a C user of libversus needs: #include <versus/versus.h>. */
#ifndef VERSUS_VERSUS_H
#define VERSUS_VERSUS_H

#include "versus/error.h"
#include "versus/rng.h"
#include "versus/tensor.h"
#include "versus/train.h"
#include "versus/zoo.h"
#include "versus/threads.h"
#include "versus/ops.h"
#include "versus/dataset.h"
#include "versus/data_io.h"
#include "versus/data_spec.h"
#include "versus/describe.h"
#include "versus/tabular.h"
#include "versus/picture.h"
#include "versus/plot.h"
#include "versus/superpixel.h"
#include "versus/explain.h"
#include "versus/method.h"
#include "versus/json.h"
#include "versus/nn.h"
#include "versus/composite.h"
#include "versus/gnn.h"
#include "versus/optim.h"
#include "versus/arch.h"
#include "versus/model.h"
#include "versus/npy.h"
#include "versus/safetensors.h"
#include "versus/optimize.h"
#include "versus/snx.h"
#include "versus/report.h"
#include "versus/shard.h"
#include "versus/experiment.h"
#include "versus/ganmex.h"
#include "versus/metrics.h"
#include "versus/evaluate.h"
#include "versus/attribute_run.h"
#include "versus/pairs.h"
#include "versus/synth.h"
#include "versus/svae.h"
#include "versus/svae_explain.h"
#include "versus/cem.h"
#include "versus/vae.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Library version, "MAJOR.MINOR.PATCH". */
const char *vs_version(void);
/* The commit the library was built from: `git describe --always --dirty` of the checkout it was
 * compiled in ("-dirty": changes not committed), the release tarball's stamp, or "unknown".  Every
 * experiment's report records it. */
const char *vs_build_commit(void);

#ifdef __cplusplus
}
#endif
#endif
