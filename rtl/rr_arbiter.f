// Round-robin arbiter (top: rr_arbiter). Paths are relative to this file (use with -F).
rr_select.sv
rr_arbiter.sv
