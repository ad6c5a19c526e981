// Round-robin select: combinational pick of the first requester at or after a
// pointer, wrapping (the lower_bound-then-front rule of hw::RoundRobinArbiter
// and of the grant/accept arbiters in hw::SwitchAllocator). No state: the
// pointer lives in the instantiating block, which decides when it moves.
//
// Thermometer-mask form (Dally & Towles, "Principles and Practices of
// Interconnection Networks", 2004, §18.4): requests at or above the pointer win
// over the wrapped-around ones; the lowest set bit of the winning half is the
// grant. A pointer >= NumReq masks everything off, so the lowest requester wins,
// as lower_bound() reaching end() does in the C++ core.

`default_nettype none

module rr_select #(
  parameter int unsigned NumReq = 4,                                  // requesters, >= 1
  localparam int unsigned IdxW = (NumReq > 1) ? $clog2(NumReq) : 1    // index width
) (
  input  logic [NumReq-1:0] req_i,    // request vector, bit r = requester r
  input  logic [IdxW-1:0]   ptr_i,    // highest-priority requester this round
  output logic [NumReq-1:0] gnt_o,    // one-hot grant, all zero when nobody requests
  output logic [IdxW-1:0]   idx_o,    // index of the granted requester (0 when none)
  output logic              valid_o   // a requester was granted
);

  logic [NumReq-1:0] mask;      // requesters at or after the pointer
  logic [NumReq-1:0] req_upper; // requests at or after the pointer
  logic [NumReq-1:0] pick_src;  // half that holds the winner

  assign mask      = {NumReq{1'b1}} << ptr_i;
  assign req_upper = req_i & mask;
  assign pick_src  = (|req_upper) ? req_upper : req_i;
`ifdef FABRICSIM_FAULT_RR_SELECT_ALL
  assign gnt_o     = pick_src;  // injected fault (rtl/CMakeLists.txt): every requester of the half
`else
  // Lowest set bit: x & -x (two's complement isolates it).
  assign gnt_o     = pick_src & (-pick_src);
`endif
  assign valid_o   = |req_i;

  always_comb begin
    idx_o = '0;
    for (int unsigned r = 0; r < NumReq; r++) begin
      if (gnt_o[r]) idx_o = IdxW'(r);
    end
  end

endmodule

`default_nettype wire
