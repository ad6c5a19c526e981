// IB VL arbiter (top: vl_arbiter). Paths are relative to this file (use with -F).
rr_select.sv
vl_arbiter.sv
