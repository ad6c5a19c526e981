// iSLIP switch allocator, second and independent implementation: same ports,
// parameters and cycle behaviour as islip_allocator.sv, written as one
// behavioural loop nest instead of unrolled rr_select instances. It exists to
// exercise the bring-your-own-RTL recipe (docs/cosim.md): a block written from
// the specification alone, dropped into the switch with
// `switch.rtl_variant: islip_allocator_alt`, and checked in lockstep against
// the hw/ "islip" core (tests/test_rtl_cosim.cpp).
//
// Specification (McKeown, "The iSLIP scheduling algorithm for input-queued
// switches", IEEE/ACM ToN 7(2), 1999, §III), per cycle:
//   repeat Iterations times
//     grant:  each still-free output looks at the inputs in the circular order
//             grant_ptr[o], grant_ptr[o]+1, ... and offers itself to the first
//             still-free input that requests it;
//     accept: each input that received offers looks at the outputs in the
//             circular order accept_ptr[i], accept_ptr[i]+1, ... and takes the
//             first one that offered; both become busy.
//   The matching is combinational. At the rising edge with update_i high, for
//   each connection accepted in the FIRST iteration: grant_ptr[o] = i + 1 and
//   accept_ptr[i] = o + 1 (mod the port counts). Pointers never move otherwise.
//
// Style difference from islip_allocator.sv: pointers are searched by a
// circular scan (index = pointer + offset, wrapped), not by a thermometer mask
// and lowest-set-bit; the iterations are a loop over shared busy vectors, not
// a generate chain of match vectors.

`default_nettype none

module islip_allocator_alt #(
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
  output logic [NumIn-1:0][OutW-1:0]    gnt_out_o     // output matched to input i (0 if none)
);

  // Round-robin pointers, always < NumIn / NumOut.
  logic [NumOut-1:0][InW-1:0]  gptr_q, gptr_d;   // per output: first input to look at
  logic [NumIn-1:0][OutW-1:0]  aptr_q, aptr_d;   // per input: first output to look at

  logic [NumIn-1:0][NumOut-1:0] conn;        // the matching after all iterations
  logic [NumIn-1:0][NumOut-1:0] conn_first;  // the connections accepted in iteration 1

  // Circular successor of a pointer position.
  function automatic int unsigned wrap_add(int unsigned base, int unsigned off, int unsigned n);
    return (base + off) % n;
  endfunction

  // Request-grant-accept iterations.
  always_comb begin : p_match
    logic [NumIn-1:0]             in_busy;   // input already connected
    logic [NumOut-1:0]            out_busy;  // output already connected
    logic [NumIn-1:0][NumOut-1:0] offered;   // offered[i][o]: output o offers itself to input i
    logic                         done;      // the current scan has found its pick
    int unsigned                  idx;       // index visited by the current scan

    conn       = '0;
    conn_first = '0;
    in_busy    = '0;
    out_busy   = '0;
    offered    = '0;
    done       = 1'b0;
    idx        = 0;
    for (int unsigned it = 0; it < Iterations; it++) begin
      offered = '0;
      // Grant: scan inputs from the output's pointer.
      for (int unsigned o = 0; o < NumOut; o++) begin
        done = out_busy[o];
        for (int unsigned off = 0; off < NumIn; off++) begin
          idx = wrap_add(int'(gptr_q[o]), off, NumIn);
          if (!done && req_i[idx][o] && !in_busy[idx]) begin
            offered[idx][o] = 1'b1;
            done = 1'b1;
          end
        end
      end
      // Accept: scan outputs from the input's pointer.
      for (int unsigned i = 0; i < NumIn; i++) begin
        done = 1'b0;
        for (int unsigned off = 0; off < NumOut; off++) begin
          idx = wrap_add(int'(aptr_q[i]), off, NumOut);
          if (!done && offered[i][idx]) begin
            conn[i][idx] = 1'b1;
            if (it == 0) conn_first[i][idx] = 1'b1;
            in_busy[i]    = 1'b1;
            out_busy[idx] = 1'b1;
            done = 1'b1;
          end
        end
      end
    end
  end

  // Pointer moves: one past the partner, first-iteration connections only.
  always_comb begin : p_next_ptr
    gptr_d = gptr_q;
    aptr_d = aptr_q;
    for (int unsigned i = 0; i < NumIn; i++) begin
      for (int unsigned o = 0; o < NumOut; o++) begin
        if (update_i && conn_first[i][o]) begin
          gptr_d[o] = InW'(wrap_add(i, 1, NumIn));
          aptr_d[i] = OutW'(wrap_add(o, 1, NumOut));
        end
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin : p_ptr_regs
    if (!rst_ni) begin
      gptr_q <= '0;
      aptr_q <= '0;
    end else begin
      gptr_q <= gptr_d;
      aptr_q <= aptr_d;
    end
  end

  // Outputs: the matching and its per-input index form.
  always_comb begin : p_outputs
    gnt_o = conn;
    for (int unsigned i = 0; i < NumIn; i++) begin
      gnt_valid_o[i] = 1'b0;
      gnt_out_o[i]   = '0;
      for (int unsigned o = 0; o < NumOut; o++) begin
        if (conn[i][o]) begin
          gnt_valid_o[i] = 1'b1;
          gnt_out_o[i]   = OutW'(o);
        end
      end
    end
  end

endmodule

`default_nettype wire
