// DELIBERATELY BROKEN copy of islip_allocator.sv, for the vector test that must
// catch it (tests/test_rtl_vectors.cpp, RtlVectors.BrokenIslipIsCaught). Never
// use it in a design.
//
// The bug, a classic one in iSLIP implementations: pointers move for grants
// accepted in EVERY iteration instead of the first one only (McKeown 1999
// updates them after the first iteration only, so that no connection can be
// starved). With one iteration it behaves like the real block; with
// Iterations > 1 the matchings drift apart from hw's "islip" as soon as a later
// iteration adds a connection and the update is committed.

`default_nettype none

module islip_allocator_broken #(
  parameter int unsigned NumIn      = 4,  // crossbar inputs, >= 1
  parameter int unsigned NumOut     = 4,  // crossbar outputs, >= 1
  parameter int unsigned Iterations = 1,  // request-grant-accept iterations, >= 1
  localparam int unsigned InW  = (NumIn > 1) ? $clog2(NumIn) : 1,   // input index width
  localparam int unsigned OutW = (NumOut > 1) ? $clog2(NumOut) : 1  // output index width
) (
  // Clock and reset
  input  logic                          clk_i,        // rising edge commits pointer updates
  input  logic                          rst_ni,       // asynchronous, active low: pointers to 0

  // Requests and commit
  input  logic [NumIn-1:0][NumOut-1:0]  req_i,        // req_i[i][o]: input i has a cell for output o
  input  logic                          update_i,     // commit this cycle's pointer moves

  // Matching (combinational)
  output logic [NumIn-1:0][NumOut-1:0]  gnt_o,        // gnt_o[i][o]: connect input i to output o
  output logic [NumIn-1:0]              gnt_valid_o,  // input i is matched
  output logic [NumIn-1:0][OutW-1:0]    gnt_out_o,    // output matched to input i (0 if none)

  // Pointer state, for lockstep against the C++ core (its grant_ptr / accept_ptr)
  output logic [NumOut-1:0][InW-1:0]    dbg_gptr_o,   // grant pointer per output
  output logic [NumIn-1:0][OutW-1:0]    dbg_aptr_o    // accept pointer per input
);

  // Pointer registers (hw: grant_ptr_, accept_ptr_).
  logic [NumOut-1:0][InW-1:0] grant_ptr_d, grant_ptr_q;   // per output: preferred input
  logic [NumIn-1:0][OutW-1:0] accept_ptr_d, accept_ptr_q; // per input: preferred output

  logic [NumIn-1:0][NumOut-1:0] final_match;   // connections after all iterations

  for (genvar it = 0; it < Iterations; it++) begin : g_iter
    logic [NumIn-1:0][NumOut-1:0] match_in;   // connections made by earlier iterations
    logic [NumIn-1:0][NumOut-1:0] match_out;  // ... including this iteration's
    logic [NumIn-1:0]             in_free;    // input still unmatched
    logic [NumOut-1:0]            out_free;   // output still unmatched
    logic [NumOut-1:0][NumIn-1:0] grant;      // grant[o][i]: output o grants input i
    logic [NumIn-1:0][NumOut-1:0] offer;      // offer[i][o] = grant[o][i]
    logic [NumIn-1:0][NumOut-1:0] accept;     // accept[i][o]: input i accepts output o

    if (it == 0) begin : g_first
      assign match_in = '0;
    end else begin : g_later
      assign match_in = g_iter[it-1].match_out;
    end

    always_comb begin
      out_free = '1;
      for (int unsigned i = 0; i < NumIn; i++) begin
        in_free[i] = ~|match_in[i];
        out_free   = out_free & ~match_in[i];
      end
    end

    // Grant phase: each unmatched output picks among unmatched requesting inputs.
    for (genvar o = 0; o < NumOut; o++) begin : g_grant
      logic [NumIn-1:0] cand;        // unmatched inputs requesting output o
      logic [InW-1:0]   unused_idx;  // index form not needed, the one-hot grant is
      logic             unused_valid;
      for (genvar i = 0; i < NumIn; i++) begin : g_cand
        assign cand[i] = req_i[i][o] & in_free[i] & out_free[o];
      end
      rr_select #(
        .NumReq (NumIn)
      ) u_grant (
        .req_i   (cand),
        .ptr_i   (grant_ptr_q[o]),
        .gnt_o   (grant[o]),
        .idx_o   (unused_idx),
        .valid_o (unused_valid)
      );
    end

    // Accept phase: each input that was granted picks one granting output.
    for (genvar i = 0; i < NumIn; i++) begin : g_accept
      logic [OutW-1:0] unused_idx;  // index form not needed, the one-hot accept is
      logic            unused_valid;
      for (genvar o = 0; o < NumOut; o++) begin : g_offer
        assign offer[i][o] = grant[o][i];
      end
      rr_select #(
        .NumReq (NumOut)
      ) u_accept (
        .req_i   (offer[i]),
        .ptr_i   (accept_ptr_q[i]),
        .gnt_o   (accept[i]),
        .idx_o   (unused_idx),
        .valid_o (unused_valid)
      );
    end

    assign match_out = match_in | accept;
  end

  assign final_match  = g_iter[Iterations-1].match_out;

  // Pointer moves for accepts of all iterations (the bug).
  always_comb begin
    grant_ptr_d  = grant_ptr_q;
    accept_ptr_d = accept_ptr_q;
    if (update_i) begin
      for (int unsigned i = 0; i < NumIn; i++) begin
        for (int unsigned o = 0; o < NumOut; o++) begin
          if (final_match[i][o]) begin  // BUG: should be first_accept[i][o]
            accept_ptr_d[i] = (o == NumOut - 1) ? '0 : OutW'(o + 1);
            grant_ptr_d[o]  = (i == NumIn - 1) ? '0 : InW'(i + 1);
          end
        end
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      grant_ptr_q  <= '0;
      accept_ptr_q <= '0;
    end else begin
      grant_ptr_q  <= grant_ptr_d;
      accept_ptr_q <= accept_ptr_d;
    end
  end

  assign dbg_gptr_o = grant_ptr_q;
  assign dbg_aptr_o = accept_ptr_q;

  // Outputs: the final matching, plus a per-input index form for the crossbar.
  assign gnt_o = final_match;
  always_comb begin
    for (int unsigned i = 0; i < NumIn; i++) begin
      gnt_valid_o[i] = |final_match[i];
      gnt_out_o[i]   = '0;
      for (int unsigned o = 0; o < NumOut; o++) begin
        if (final_match[i][o]) gnt_out_o[i] = OutW'(o);
      end
    end
  end

endmodule

`default_nettype wire
