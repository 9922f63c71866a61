# datasets/synth.mk
