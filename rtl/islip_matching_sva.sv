// Assertions on the port contract of an iSLIP allocator (islip_allocator, or any
// block with its ports through a bind): the grant matrix is
// a matching (at most one grant per input and per output), grants only
// requested connections, is never empty while something is requested (the
// first iteration always connects one requester), and agrees with its
// per-input index form. Observes ports only, so it fits any implementation of
// the islip_allocator interface. Checked with verilator --assert at the rising
// edge outside reset; nothing here is synthesised.

`default_nettype none

module islip_matching_sva #(
  parameter int unsigned NumIn  = 4,  // crossbar inputs, >= 1
  parameter int unsigned NumOut = 4,  // crossbar outputs, >= 1
  localparam int unsigned OutW = (NumOut > 1) ? $clog2(NumOut) : 1  // output index width
) (
  input  logic                          clk_i,        // assertions sample at the rising edge
  input  logic                          rst_ni,       // off while in reset
  input  logic [NumIn-1:0][NumOut-1:0]  req_i,        // the allocator's requests
  input  logic [NumIn-1:0][NumOut-1:0]  gnt_o,        // its matching
  input  logic [NumIn-1:0]              gnt_valid_o,  // its per-input valid
  input  logic [NumIn-1:0][OutW-1:0]    gnt_out_o     // its per-input output index
);

  logic sva_off;  // own net: rst_ni stays a purely asynchronous reset for lint
  assign sva_off = !rst_ni;

  logic [NumOut-1:0][NumIn-1:0] gnt_t;  // gnt_t[o][i] = gnt_o[i][o]
  always_comb begin
    for (int unsigned i = 0; i < NumIn; i++) begin
      for (int unsigned o = 0; o < NumOut; o++) begin
        gnt_t[o][i] = gnt_o[i][o];
      end
    end
  end

  GntOnReq_A: assert property (@(posedge clk_i) disable iff (sva_off) (gnt_o & ~req_i) == '0)
    else $error("iSLIP: grant %b without request (req %b)", gnt_o, req_i);
  GntIfReq_A: assert property (@(posedge clk_i) disable iff (sva_off) (|req_i) |-> (|gnt_o))
    else $error("iSLIP: requests %b but no grant", req_i);

  for (genvar i = 0; i < NumIn; i++) begin : g_in
    InOneHot_A: assert property (@(posedge clk_i) disable iff (sva_off) $onehot0(gnt_o[i]))
      else $error("iSLIP: input %0d granted outputs %b", i, gnt_o[i]);
    InIdx_A: assert property (@(posedge clk_i) disable iff (sva_off)
                              gnt_valid_o[i] == (|gnt_o[i]) &&
                              (!gnt_valid_o[i] ||
                               (32'(gnt_out_o[i]) < NumOut && gnt_o[i][gnt_out_o[i]])))
      else $error("iSLIP: input %0d valid %b index %0d disagree with grant %b", i, gnt_valid_o[i],
                  gnt_out_o[i], gnt_o[i]);
  end

  for (genvar o = 0; o < NumOut; o++) begin : g_out
    OutOneHot_A: assert property (@(posedge clk_i) disable iff (sva_off) $onehot0(gnt_t[o]))
      else $error("iSLIP: output %0d granted to inputs %b", o, gnt_t[o]);
  end

endmodule

`default_nettype wire
