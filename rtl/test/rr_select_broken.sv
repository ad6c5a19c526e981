// DELIBERATELY BROKEN copy of rr_select.sv, for the test that the arbiter
// assertions fire (tests/test_rtl_vectors.cpp, RtlVectors.ArbiterAssertionFires).
// Never use it in a design.
//
// The bug: the lowest set bit of the winning half is not isolated, so every
// requester at or after the pointer is granted at once. rr_arbiter.sv built on
// it (rr_arbiter_broken.f) keeps its own assertions, and GntOneHot_A must
// catch the second grant in the first cycle with two such requesters.

`default_nettype none

// It stands in for rr_select.sv, so it carries that module name.
/* verilator lint_off DECLFILENAME */
module rr_select #(
  parameter int unsigned NumReq = 4,                                  // requesters, >= 1
  localparam int unsigned IdxW = (NumReq > 1) ? $clog2(NumReq) : 1    // index width
) (
  input  logic [NumReq-1:0] req_i,    // request vector, bit r = requester r
  input  logic [IdxW-1:0]   ptr_i,    // highest-priority requester this round
  output logic [NumReq-1:0] gnt_o,    // BROKEN: every requester of the winning half
  output logic [IdxW-1:0]   idx_o,    // index of the lowest granted requester (0 when none)
  output logic              valid_o   // a requester was granted
);

  logic [NumReq-1:0] mask;      // requesters at or after the pointer
  logic [NumReq-1:0] req_upper; // requests at or after the pointer

  assign mask      = {NumReq{1'b1}} << ptr_i;
  assign req_upper = req_i & mask;
  assign gnt_o     = (|req_upper) ? req_upper : req_i;  // BUG: should be x & -x of this
  assign valid_o   = |req_i;

  always_comb begin
    idx_o = '0;
    for (int r = NumReq - 1; r >= 0; r--) begin
      if (gnt_o[r]) idx_o = IdxW'(r);
    end
  end

endmodule
/* verilator lint_on DECLFILENAME */

`default_nettype wire
