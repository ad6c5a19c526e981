// Deliberately broken iSLIP allocator (top: islip_allocator_broken), test only.
// Paths are relative to this file (use with -F).
../rr_select.sv
islip_allocator_broken.sv
