"""Dynamic networks in the notation of Hagan's *Neural Network Design*: transfer functions,
tapped delay lines, layered digital dynamic networks (LDDN) with BPTT, the toolbox's network
constructors (timedelaynet, distdelaynet, layrecnet, narxnet) and a small training loop."""
