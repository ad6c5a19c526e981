// iSLIP switch allocator, NumIn inputs x NumOut outputs, Iterations
// request-grant-accept iterations: RTL twin of the "islip" policy of
// hw::make_allocator (hw/allocator.cpp, SeparableAllocator with
// kFirstIterationAccept). McKeown, "The iSLIP scheduling algorithm for
// input-queued switches", IEEE/ACM ToN 7(2), 1999, §III.
//
// Each iteration: every unmatched output grants the first unmatched requesting
// input at or after its grant pointer; every input that received grants accepts
// the first granting output at or after its accept pointer. Pointers are read,
// never changed, during the iterations.
//
// Timing: the matching is combinational from req_i and the pointer registers
// (the C++ arbitrate(), all iterations unrolled in one cycle). At the clock edge
// where update_i is high the pointers move, for grants accepted in the first
// iteration only: grant pointer of output o -> i + 1, accept pointer of input
// i -> o + 1 (the C++ update_state()). With update_i low the same requests give
// the same matching again.

`default_nettype none

module islip_allocator #(
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

  logic [NumIn-1:0][NumOut-1:0] first_accept;  // connections made in iteration 1
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

  assign first_accept = g_iter[0].accept;
  assign final_match  = g_iter[Iterations-1].match_out;

  // Pointer moves, first-iteration accepts only (iSLIP desynchronisation).
  always_comb begin
    grant_ptr_d  = grant_ptr_q;
    accept_ptr_d = accept_ptr_q;
    if (update_i) begin
      for (int unsigned i = 0; i < NumIn; i++) begin
        for (int unsigned o = 0; o < NumOut; o++) begin
`ifdef FABRICSIM_FAULT_ISLIP_EVERY_ITERATION
          if (final_match[i][o]) begin  // injected fault (rtl/models/islip_allocator_broken.cmake)
`else
          if (first_accept[i][o]) begin
`endif
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

  // Assertions (verilator --assert) and cover points (--coverage-user), sampled at the
  // rising edge outside reset: the port contract (a matching, only on requests) in
  // islip_matching_sva; here the pointers stay in range, and the first-iteration
  // accepts, which move them, are part of the matching.
  islip_matching_sva #(
    .NumIn  (NumIn),
    .NumOut (NumOut)
  ) u_sva (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .req_i       (req_i),
    .gnt_o       (gnt_o),
    .gnt_valid_o (gnt_valid_o),
    .gnt_out_o   (gnt_out_o)
  );

  logic sva_off;  // own net: rst_ni stays a purely asynchronous reset for lint
  assign sva_off = !rst_ni;

  logic ptrs_ok;  // every grant pointer < NumIn, every accept pointer < NumOut
  always_comb begin
    ptrs_ok = 1'b1;
    for (int unsigned o = 0; o < NumOut; o++) ptrs_ok &= 32'(grant_ptr_q[o]) < NumIn;
    for (int unsigned i = 0; i < NumIn; i++) ptrs_ok &= 32'(accept_ptr_q[i]) < NumOut;
  end
  PtrRange_A: assert property (@(posedge clk_i) disable iff (sva_off) ptrs_ok)
    else $error("islip_allocator: pointer out of range (grant %h, accept %h)", grant_ptr_q,
                accept_ptr_q);
  FirstInFinal_A: assert property (@(posedge clk_i) disable iff (sva_off)
                                   (first_accept & ~final_match) == '0)
    else $error("islip_allocator: first-iteration accepts %b not in the matching %b", first_accept,
                final_match);

  AllInputsMatched_C: cover property (@(posedge clk_i) disable iff (sva_off) &gnt_valid_o);
  LastInputWins_C: cover property (@(posedge clk_i) disable iff (sva_off)
                                   update_i && (|first_accept[NumIn-1]));
  if (Iterations > 1) begin : g_cov_iter
    LaterIteration_C: cover property (@(posedge clk_i) disable iff (sva_off)
                                      final_match != first_accept);
  end

endmodule

`default_nettype wire
