#!/bin/sh
# cli_breadth.sh - the Captum-style methods from the command line on an MLP, a CNN and Siamese pairs:
# every method runs, layer methods write the layer's shape, feature masks group features, a two-input
# composite with a learned head is a pair model in predict, attribute and evaluate, and misuse exits
# with a message.
set -u
. "$(dirname "$0")/cli_lib.sh"
V=$(pwd)/versus
TOOL=$(pwd)/tests/composite_tool
W=cli_breadth.dir
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 1

check "train mlp" 0 $V train --arch mlp --data synthetic-tabular --n 200 --epochs 2 --seed 2 --out clf
check "export tabular" 0 $V data export synthetic-tabular --n 200 --seed 2 --out tab
cat > cnn.json <<'JSON'
{"format": "versus-model/1", "input": [1, 16, 16], "sequential": [
  {"op": "conv2d", "in": 1, "out": 4, "kernel": 3, "padding": 1}, {"op": "relu"}, {"op": "max_pool2d", "kernel": 2},
  {"op": "conv2d", "in": 4, "out": 4, "kernel": 3, "padding": 1}, {"op": "relu"}, {"op": "flatten"},
  {"op": "linear", "in": 256, "out": 2}]}
JSON
check "train cnn" 0 $V train --spec cnn.json --data synthetic-shapes --n 60 --epochs 1 --seed 1 --out cnn
check "export shapes" 0 $V data export synthetic-shapes --n 3 --seed 1 --out shapes
check "train siamese" 0 $V train --arch siamese-mlp --data synthetic-tabular --n 200 --epochs 2 --seed 2 --out sn

FEATURE="guided_backprop deconvolution lrp feature_ablation shapley_value_sampling noise_tunnel"
for m in $FEATURE; do
    check "mlp $m" 0 $V attribute --model clf --input tab/X.npy --method $m --samples 4 --out mlp_$m.npy
    exists "mlp $m written" mlp_$m.npy
    check "cnn $m" 0 $V attribute --model cnn --input shapes/X.npy --method $m --samples 2 --out cnn_$m.npy
done
check "guided_gradcam on the cnn" 0 $V attribute --model cnn --input shapes/X.npy --method guided_gradcam --out cnn_ggc.npy
check "feature_permutation with a baseline set" 0 $V attribute --model clf --input tab/X.npy --method feature_permutation \
    --baselines tab/X.npy --samples 2 --out perm.npy
check "lrp gamma with a report" 0 $V attribute --model cnn --input shapes/X.npy --method lrp --lrp-rule gamma --report lrp.json --out l.npy
grep_out "conservation gap reported" '"largest_delta"' lrp.json
check "noise tunnel vargrad over IG" 0 $V attribute --model clf --input tab/X.npy --method noise_tunnel --nt-method integrated_gradients \
    --nt-type vargrad --samples 3 --noise 0.1 --out nt.npy
for m in layer_activation layer_gradient_x_activation layer_integrated_gradients layer_conductance; do
    check "cnn $m" 0 $V attribute --model cnn --input shapes/X.npy --method $m --layer 2 --steps 8 --out cl_$m.npy
    check "mlp $m" 0 $V attribute --model clf --input tab/X.npy --method $m --layer 1 --steps 8 --out ml_$m.npy
done
check "the layer's shape" 0 $V attribute --model cnn --input shapes/X.npy --method layer_activation --layer 2 --out shape.npy
head -c 128 shape.npy | grep -q "(3, 4, 8, 8)" && ok || bad "layer_activation of layer 2 is [3, 4, 8, 8]"
for m in neuron_integrated_gradients neuron_conductance; do
    check "cnn $m" 0 $V attribute --model cnn --input shapes/X.npy --method $m --layer 3 --neuron 7 --steps 8 --out cn_$m.npy
    check "mlp $m" 0 $V attribute --model clf --input tab/X.npy --method $m --layer 0 --steps 8 --out mn_$m.npy
done
# Siamese pairs: the perturbation and modified-gradient methods apply, on either side
for m in guided_backprop deconvolution feature_ablation shapley_value_sampling noise_tunnel; do
    check "pairs $m" 0 $V attribute --model sn --input tab/X.npy --reference tab/X.npy --side both --method $m --samples 2 --out p_$m.npy
done
# LRP and the layer and neuron methods on one side of a pair: the encoder's layer, the other side fixed
check "lrp on pairs" 0 $V attribute --model sn --input tab/X.npy --reference tab/X.npy --side reference --method lrp --out p_lrp.npy
check "lrp needs one side" 1 $V attribute --model sn --input tab/X.npy --reference tab/X.npy --side both --method lrp --out x.npy
grep_out "lrp says why" "one side of a pair" err.txt
for m in layer_activation layer_gradient_x_activation layer_integrated_gradients layer_conductance neuron_integrated_gradients \
    neuron_conductance; do
    check "pairs $m" 0 $V attribute --model sn --input tab/X.npy --reference tab/X.npy --method $m --layer encoder.1 --steps 8 \
        --out pl_$m.npy
done
check "pairs layer IG report" 0 $V attribute --model sn --input tab/X.npy --reference tab/X.npy --method layer_integrated_gradients \
    --report pl.json --out x.npy
grep_out "pairs layer IG complete" 'largest completeness gap -\?[0-9.]*e-\(0[5-9]\|[1-9][0-9]\)' err.txt
check "layer methods need one side" 1 $V attribute --model sn --input tab/X.npy --reference tab/X.npy --side both \
    --method layer_conductance --out x.npy
check "a Siamese layer that is not there" 1 $V attribute --model sn --input tab/X.npy --reference tab/X.npy \
    --method layer_activation --layer tower.1 --out x.npy
grep_out "the Siamese child named" "one child is 'encoder'" err.txt
# a composite's layers by path
cat > comp.json <<'JSON'
{"format": "versus-model/1", "composite": {"inputs": {"x": [37]},
 "models": {"fc1": {"op": "linear", "in": 37, "out": 16},
            "main": {"sequential": [{"op": "linear", "in": 16, "out": 8}, {"op": "relu"}, {"op": "linear", "in": 8, "out": 2}]}},
 "graph": [{"call": "fc1", "in": "x", "out": "h"}, {"op": "relu", "in": "h", "out": "r"}, {"call": "main", "in": "r", "out": "y"}],
 "outputs": ["y"]}}
JSON
check "train composite" 0 $V train --spec comp.json --data synthetic-tabular --n 200 --epochs 1 --seed 2 --out comp
check "composite fc1" 0 $V attribute --model comp --input tab/X.npy --method layer_conductance --layer fc1 --steps 8 --out cf.npy
shape_is "composite fc1 is [200, 16]" cf.npy "(200, 16)"
check "composite main.1" 0 $V attribute --model comp --input tab/X.npy --method layer_integrated_gradients --layer main.1 --out cm.npy
shape_is "composite main.1 is [200, 8]" cm.npy "(200, 8)"
check "composite neuron" 0 $V attribute --model comp --input tab/X.npy --method neuron_conductance --layer main.0 --neuron 3 --out cn.npy
check "composite layer not there" 1 $V attribute --model comp --input tab/X.npy --method layer_activation --layer main.5 --out x.npy
grep_out "the path and the layers named" "'main', a sequential of layers 0..2" err.txt
check "composite without --layer" 1 $V attribute --model comp --input tab/X.npy --method layer_activation --out x.npy
grep_out "the composite's models listed" "its models: fc1, main" err.txt
check "a path that is no path" 2 $V attribute --model comp --input tab/X.npy --method layer_activation --layer 'main..1' --out x.npy
# feature masks
# a mask of two groups over the 37 tabular features (float32 .npy: 20 zeros then 17 ones), written by hand
h="{'descr': '<f4', 'fortran_order': False, 'shape': (37,), }"
{ printf '\223NUMPY\001\000\166\000%s' "$h"; printf '%*s\n' $((118 - ${#h} - 1)) ''
  i=0; while [ $i -lt 20 ]; do printf '\000\000\000\000'; i=$((i + 1)); done
  while [ $i -lt 37 ]; do printf '\000\000\200\077'; i=$((i + 1)); done; } >m.npy
check "feature_ablation with a mask" 0 $V attribute --model clf --input tab/X.npy --method feature_ablation --feature-mask m.npy --out fm.npy
check "shapley sampling with a mask" 0 $V attribute --model clf --input tab/X.npy --method shapley_value_sampling --feature-mask m.npy \
    --samples 2 --out fs.npy
check "a mask of the wrong size" 1 $V attribute --model cnn --input shapes/X.npy --method feature_ablation --feature-mask tab/X.npy --out x.npy
grep_out "mask size named" "one input row's 256 elements" err.txt
check "a mask with segments" 2 $V attribute --model cnn --input shapes/X.npy --method feature_ablation --feature-mask m.npy --segments 4 --out x.npy
check "a mask for a method without groups" 2 $V attribute --model cnn --input shapes/X.npy --method lrp --feature-mask m.npy --out x.npy
check "neuron outside the layer" 1 $V attribute --model clf --input tab/X.npy --method neuron_conductance --layer 1 --neuron 64 --out x.npy
grep_out "neuron named" "neuron 64" err.txt
check "layer past the end" 1 $V attribute --model clf --input tab/X.npy --method layer_activation --layer 2 --out x.npy
check "unknown lrp rule" 2 $V attribute --model clf --input tab/X.npy --method lrp --lrp-rule omega --out x.npy
# GradientSHAP, and a misspelt method's suggestion
check "gradient_shap" 0 $V attribute --model clf --input tab/X.npy --method gradient_shap --baselines tab/X.npy --samples 8 \
    --stdevs 0.1 --out gs.npy
shape_is "gradient_shap is [200, 37]" gs.npy "(200, 37)"
check "GradientShap misspelt" 2 $V attribute --model clf --input tab/X.npy --method GradientShap --out x.npy
grep_out "did you mean" "did you mean 'gradient_shap'" err.txt
# a pair model whose head is learned (shared encoder, concat -> linear): any composite with two inputs
cat > ph.json <<'JSON'
{"format": "versus-model/1", "composite": {"inputs": {"q": [37], "r": [37]},
 "models": {"enc": {"sequential": [{"op": "linear", "in": 37, "out": 8}, {"op": "tanh"}]},
            "head": {"sequential": [{"op": "linear", "in": 16, "out": 8}, {"op": "tanh"}, {"op": "linear", "in": 8, "out": 1}]}},
 "graph": [{"call": "enc", "in": "q", "out": "eq"}, {"call": "enc", "in": "r", "out": "er"},
           {"op": "concat", "in": ["eq", "er"], "axis": 1, "out": "h"}, {"call": "head", "in": "h", "out": "y"}],
 "outputs": ["y"]}}
JSON
check "a learned-head pair model" 0 $TOOL init ph.json ph
check "export one reference" 0 $V data export synthetic-tabular --n 1 --seed 5 --out one
check "predict pairs" 0 $V predict --model ph --input tab/X.npy --reference tab/X.npy --out py.npy
shape_is "the head's output [200, 1]" py.npy "(200, 1)"
check "predict against one reference" 0 $V predict --model ph --input tab/X.npy --reference one/X.npy --out py1.npy
check "predict pairs needs --reference" 1 $V predict --model ph --input tab/X.npy --out x.npy
grep_out "predict says it compares pairs" "compares pairs" err.txt
check "a classifier with --reference" 1 $V predict --model clf --input tab/X.npy --reference tab/X.npy --out x.npy
grep_out "predict says one input" "takes one input" err.txt
check "learned-head pairs, both sides" 0 $V attribute --model ph --input tab/X.npy --reference tab/X.npy --side both \
    --method integrated_gradients --report ph_ig.json --out ph_ig.npy
shape_is "both sides [200, 2, 37]" ph_ig.npy "(200, 2, 37)"
grep_out "learned-head IG complete" 'largest completeness gap -\?[0-9.]*e-\(0[5-9]\|[1-9][0-9]\)' err.txt
check "learned-head pairs, one reference" 0 $V attribute --model ph --input tab/X.npy --reference one/X.npy --method saliency --out ph_s.npy
check "learned-head pairs need a reference" 1 $V attribute --model ph --input tab/X.npy --method saliency --out x.npy
grep_out "attribute says it compares pairs" "compares pairs" err.txt
check "evaluate learned-head pairs" 0 $V evaluate --model ph --input tab/X.npy --attributions ph_s.npy --reference one/X.npy --out ph_e.json
exists "evaluate wrote" ph_e.json
check "evaluate learned-head pairs need a reference" 1 $V evaluate --model ph --input tab/X.npy --attributions ph_s.npy --out x.json
# the Quantus metrics of versus evaluate
cat > cnn0.json <<'JSON'
{"format": "versus-model/1", "input": [1, 16, 16], "sequential": [
  {"op": "conv2d", "in": 1, "out": 4, "kernel": 3}, {"op": "relu"}, {"op": "max_pool2d", "kernel": 2},
  {"op": "flatten"}, {"op": "linear", "in": 196, "out": 2}]}
JSON
check "train an unpadded cnn" 0 $V train --spec cnn0.json --data synthetic-shapes --n 60 --epochs 1 --seed 1 --out cnn0
for m in saliency input_x_gradient; do
    check "attribute $m" 0 $V attribute --model cnn0 --input shapes/X.npy --method $m --out e_$m.npy
    check "evaluate $m" 0 $V evaluate --model cnn0 --input shapes/X.npy --attributions e_$m.npy --method $m --samples 2 \
        --mask-data synthetic-shapes --replace zero --out e_$m.json
    for k in complexity effective_complexity non_sensitivity pointing_game relevance_mass relevance_rank top_k_intersection auc \
        max_sensitivity avg_sensitivity local_lipschitz random_logit_ssim input_invariance; do
        grep_out "$m: $k reported" "\"$k\": {\"mean\": [0-9]" e_$m.json
    done
done
# Kindermans et al.: the gradient is invariant to a shift the first layer absorbs, input x gradient is not
grep_out "saliency is input invariant" '"input_invariance": {"mean": 1,' e_saliency.json
grep_out "input x gradient is not" '"input_invariance": {"mean": 0,' e_input_x_gradient.json
check "a padded first conv cannot absorb the shift" 0 $V evaluate --model cnn --input shapes/X.npy --attributions cnn_lrp.npy \
    --method saliency --samples 1 --out pad.json
grep_out "input invariance null there" '"input_invariance": {"mean": null' pad.json
check "a mask of the wrong size" 1 $V evaluate --model cnn0 --input shapes/X.npy --attributions e_saliency.npy --mask tab/X.npy
check "no planted mask" 1 $V evaluate --model clf --input tab/X.npy --attributions mlp_lrp.npy --mask-data adult
check "an interaction method for robustness" 2 $V evaluate --model cnn0 --input shapes/X.npy --attributions e_saliency.npy \
    --method integrated_hessians
check "help evaluate" 0 $V help evaluate
for k in Yeh Bhatt Arras Theiner Fawcett Sixt Kindermans Chalasani PointingGame LocalLipschitzEstimate; do grep_out "help: $k" "$k" out.txt; done
check "help lists the methods" 0 $V help attribute
for m in $FEATURE guided_gradcam feature_permutation layer_conductance neuron_conductance; do grep_out "help: $m" "$m" out.txt; done

cd .. && rm -rf "$W"
echo "cli_breadth: $pass passed, $fails failed"
[ "$fails" -eq 0 ]
