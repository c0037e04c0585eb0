"""Audio to spikes: the cochlea model of the Heidelberg spiking data sets (Cramer et al. 2020)."""
