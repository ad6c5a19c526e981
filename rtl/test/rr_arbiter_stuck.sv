// DELIBERATELY BROKEN copy of rr_arbiter (rtl/rr_arbiter.sv), test only: the pointer
// stays on the winner (grant-and-hold) instead of moving past it, so a requester that
// keeps asking starves the others. tests/test_rtl_arbiter.cpp shows lockstep catches it.
//
// Timing: the grant is combinational from req_i and the pointer register (the
// C++ arbitrate()); the pointer should move to winner + 1 at the clock edge where
// update_i is high and there is a grant (the C++ update_state(arbitrate())).
// Holding update_i low arbitrates without committing, so the same requests give
// the same grant again, as repeated arbitrate() calls do.

`default_nettype none

module rr_arbiter_stuck #(
  parameter int unsigned NumReq = 4,                                  // requesters, >= 1
  localparam int unsigned IdxW = (NumReq > 1) ? $clog2(NumReq) : 1    // index width
) (
  // Clock and reset
  input  logic              clk_i,        // rising edge commits updates
  input  logic              rst_ni,       // asynchronous, active low: pointer to 0

  // Requests and commit
  input  logic [NumReq-1:0] req_i,        // bit r: requester r bids this cycle
  input  logic              update_i,     // commit this cycle's grant (pointer -> winner + 1)

  // Grant (combinational)
  output logic [NumReq-1:0] gnt_o,        // one-hot grant, zero when nobody requests
  output logic [IdxW-1:0]   gnt_idx_o,    // index of the granted requester
  output logic              gnt_valid_o,  // some requester was granted
  output logic [IdxW-1:0]   ptr_o         // requester with highest priority this cycle
);

  logic [IdxW-1:0] ptr_d, ptr_q;  // round-robin pointer (hw: pointer())

  rr_select #(
    .NumReq (NumReq)
  ) u_select (
    .req_i   (req_i),
    .ptr_i   (ptr_q),
    .gnt_o   (gnt_o),
    .idx_o   (gnt_idx_o),
    .valid_o (gnt_valid_o)
  );

  // Grant-and-advance: the winner becomes lowest priority next round.
  always_comb begin
    ptr_d = ptr_q;
    if (update_i && gnt_valid_o) begin
      ptr_d = gnt_idx_o;  // the bug: should be winner + 1
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ptr_q <= '0;
    end else begin
      ptr_q <= ptr_d;
    end
  end

  assign ptr_o = ptr_q;

endmodule

`default_nettype wire
