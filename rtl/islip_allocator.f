// iSLIP switch allocator (top: islip_allocator). Paths are relative to this file (use with -F).
rr_select.sv
islip_matching_sva.sv
islip_allocator.sv
