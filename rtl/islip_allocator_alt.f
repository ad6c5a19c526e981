// Second, independent iSLIP allocator in a third-party style (top: islip_allocator_alt).
// Paths are relative to this file (use with -F); the .vlt holds its lint waivers.
islip_allocator_alt.vlt
islip_allocator_alt.sv
