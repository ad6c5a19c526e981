// Second, independent iSLIP allocator (top: islip_allocator_alt), the docs/cosim.md recipe example.
// Paths are relative to this file (use with -F).
islip_allocator_alt.sv
