// Round-robin arbiter over NumReq requesters: RTL twin of hw::RoundRobinArbiter
// (hw/arbiter.h).
//
// Timing: the grant is combinational from req_i and the pointer register (the
// C++ arbitrate()); the pointer moves to winner + 1 at the clock edge where
// update_i is high and there is a grant (the C++ update_state(arbitrate())).
// Holding update_i low arbitrates without committing, so the same requests give
// the same grant again, as repeated arbitrate() calls do.

`default_nettype none

module rr_arbiter #(
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
`ifdef FABRICSIM_FAULT_RR_HOLD
      ptr_d = gnt_idx_o;  // injected fault (rtl/models/rr_arbiter_stuck.cmake): the winner keeps priority
`else
      ptr_d = (gnt_idx_o == IdxW'(NumReq - 1)) ? '0 : gnt_idx_o + 1'b1;
`endif
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

  // Assertions (verilator --assert) and cover points (--coverage-user), sampled at the
  // rising edge outside reset. sva_off is its own net so that rst_ni stays a purely
  // asynchronous reset for lint.
  logic sva_off;
  assign sva_off = !rst_ni;

  GntOneHot_A: assert property (@(posedge clk_i) disable iff (sva_off) $onehot0(gnt_o))
    else $error("rr_arbiter: grant %b is not one-hot", gnt_o);
  GntOnReq_A: assert property (@(posedge clk_i) disable iff (sva_off) (gnt_o & ~req_i) == '0)
    else $error("rr_arbiter: grant %b without request (req %b)", gnt_o, req_i);
  GntIfReq_A: assert property (@(posedge clk_i) disable iff (sva_off) gnt_valid_o == (|req_i))
    else $error("rr_arbiter: requests %b but grant valid %b", req_i, gnt_valid_o);
  GntIdx_A: assert property (@(posedge clk_i) disable iff (sva_off)
                             gnt_valid_o |-> (32'(gnt_idx_o) < NumReq) && gnt_o[gnt_idx_o])
    else $error("rr_arbiter: index %0d disagrees with grant %b", gnt_idx_o, gnt_o);
  PtrRange_A: assert property (@(posedge clk_i) disable iff (sva_off) 32'(ptr_q) < NumReq)
    else $error("rr_arbiter: pointer %0d out of range", ptr_q);

  Contention_C: cover property (@(posedge clk_i) disable iff (sva_off)
                                update_i && !$onehot0(req_i));
  PtrWrap_C: cover property (@(posedge clk_i) disable iff (sva_off)
                             update_i && gnt_valid_o && gnt_idx_o == IdxW'(NumReq - 1));

endmodule

`default_nettype wire
