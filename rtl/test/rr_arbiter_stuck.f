// Deliberately broken round-robin arbiter (top: rr_arbiter_stuck), test only.
// Paths are relative to this file (use with -F).
../rr_select.sv
rr_arbiter_stuck.sv
