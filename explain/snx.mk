# explain/snx.mk: SNX and its baselines (Siamese network explanations).
