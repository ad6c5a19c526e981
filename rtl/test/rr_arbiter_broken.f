// The real rr_arbiter (top: rr_arbiter) on a DELIBERATELY BROKEN rr_select that
// grants several requesters, test only. Paths are relative to this file (use with -F).
rr_select_broken.sv
../rr_arbiter.sv
