// iSLIP switch allocator, second and independent implementation, written from
// the specification alone as one behavioural loop nest (circular scans), not
// derived from islip_allocator.sv. It is written in a third-party house style
// on purpose (Verilog-2001 flavour: flat buses, synchronous active-high reset,
// registered outputs with a valid/ready handshake, debug ports): a block whose
// interface is not the project's. Twin of hw::make_allocator("islip", ...),
// checked edge by edge by tests/test_rtl_alt_style.cpp.
//
// Specification (McKeown, "The iSLIP scheduling algorithm for input-queued
// switches", IEEE/ACM ToN 7(2), 1999, §III): repeat ROUNDS times: each free
// output offers itself to the first free requesting input in the circular
// order grant_ptr[o], grant_ptr[o]+1, ...; each offered input takes the first
// offering output from accept_ptr[i] on; both become busy. A committed
// matching moves, for each connection made in the FIRST iteration only,
// grant_ptr[o] to i + 1 and accept_ptr[i] to o + 1 (mod PORTS).
//
// Timing (one rising edge of latency):
//   reset       synchronous, active high: an edge with reset high zeroes the
//               pointers, grant and grant_valid.
//   commit      an edge with grant_valid && grant_ready moves the pointers per
//               the first-iteration connections of the PRESENTED grant (kept in
//               a register beside it); pointers never move otherwise.
//   grant       every edge with reset low registers the matching of `request`
//               against the pointers as they stand after that edge (including
//               its commit), so holding grant_ready high commits one matching
//               per cycle. grant follows request; it is not held while waiting.
//   grant_valid low after reset, high from the first edge with reset low on:
//               the registered matching is always a computed one (possibly
//               empty; committing an empty matching moves nothing).

`default_nettype none

module islip_allocator_alt #(
  parameter PORTS  = 4,  // crossbar inputs = outputs (N x N), >= 1
  parameter ROUNDS = 1,  // request-grant-accept iterations per matching, >= 1
  localparam IdxW = (PORTS > 1) ? $clog2(PORTS) : 1  // port index width
) (
  input  wire                     clock,        // all state changes at the rising edge
  input  wire                     reset,        // synchronous, active high

  input  wire [PORTS*PORTS-1:0]   request,      // bit i*PORTS+o: input i has a cell for output o
  input  wire                     grant_ready,  // the consumer takes the presented matching

  output reg  [PORTS*PORTS-1:0]   grant,        // bit i*PORTS+o: connect input i to output o
  output reg                      grant_valid,  // grant holds a computed matching

  output wire [PORTS*IdxW-1:0]    dbg_grant_ptr,   // per output: first input it looks at
  output wire [PORTS*IdxW-1:0]    dbg_accept_ptr   // per input: first output it looks at
);

  if (PORTS < 1 || ROUNDS < 1) begin : g_bad_params
    $error("islip_allocator_alt: PORTS and ROUNDS must be at least 1");
  end

  reg  [PORTS*IdxW-1:0]   grant_ptr;     // per output, always < PORTS
  reg  [PORTS*IdxW-1:0]   accept_ptr;    // per input, always < PORTS
  reg  [PORTS*PORTS-1:0]  grant_first;   // connections of `grant` made in iteration 1

  wire                    commit = grant_valid && grant_ready;
  reg  [PORTS*IdxW-1:0]   grant_ptr_next;
  reg  [PORTS*IdxW-1:0]   accept_ptr_next;
  reg  [PORTS*PORTS-1:0]  match;         // matching of `request` from the next pointers
  reg  [PORTS*PORTS-1:0]  match_first;   // its iteration-1 connections

  assign dbg_grant_ptr  = grant_ptr;
  assign dbg_accept_ptr = accept_ptr;

  // Pointer moves of the committed matching: one past the partner.
  integer pi, po;
  always @* begin
    grant_ptr_next  = grant_ptr;
    accept_ptr_next = accept_ptr;
    if (commit) begin
      for (pi = 0; pi < PORTS; pi = pi + 1) begin
        for (po = 0; po < PORTS; po = po + 1) begin
          if (grant_first[pi*PORTS+po]) begin
            grant_ptr_next[po*IdxW +: IdxW]  = wrap(pi + 1);
            accept_ptr_next[pi*IdxW +: IdxW] = wrap(po + 1);
          end
        end
      end
    end
  end

  // Request-grant-accept iterations over shared busy vectors.
  reg [PORTS-1:0]        in_busy;   // input already connected
  reg [PORTS-1:0]        out_busy;  // output already connected
  reg [PORTS*PORTS-1:0]  offer;     // bit i*PORTS+o: output o offers itself to input i
  reg                    found;     // the current scan has made its pick
  integer it, i, o, k, idx;
  always @* begin
    match       = {PORTS*PORTS{1'b0}};
    match_first = {PORTS*PORTS{1'b0}};
    in_busy     = {PORTS{1'b0}};
    out_busy    = {PORTS{1'b0}};
    offer       = {PORTS*PORTS{1'b0}};
    found       = 1'b0;
    idx         = 0;
    for (it = 0; it < ROUNDS; it = it + 1) begin
      offer = {PORTS*PORTS{1'b0}};
      // Grant: each free output scans the inputs from its grant pointer.
      for (o = 0; o < PORTS; o = o + 1) begin
        found = out_busy[o];
        for (k = 0; k < PORTS; k = k + 1) begin
          idx = wrap_from(grant_ptr_next[o*IdxW +: IdxW], k);
          if (!found && request[idx*PORTS+o] && !in_busy[idx]) begin
            offer[idx*PORTS+o] = 1'b1;
            found = 1'b1;
          end
        end
      end
      // Accept: each offered input scans the outputs from its accept pointer.
      for (i = 0; i < PORTS; i = i + 1) begin
        found = 1'b0;
        for (k = 0; k < PORTS; k = k + 1) begin
          idx = wrap_from(accept_ptr_next[i*IdxW +: IdxW], k);
          if (!found && offer[i*PORTS+idx]) begin
            match[i*PORTS+idx] = 1'b1;
            if (it == 0) match_first[i*PORTS+idx] = 1'b1;
            in_busy[i]    = 1'b1;
            out_busy[idx] = 1'b1;
            found = 1'b1;
          end
        end
      end
    end
  end

  always @(posedge clock) begin
    grant_ptr   <= grant_ptr_next;
    accept_ptr  <= accept_ptr_next;
    grant       <= match;
    grant_first <= match_first;
    grant_valid <= 1'b1;
    if (reset) begin
      grant_ptr   <= {PORTS*IdxW{1'b0}};
      accept_ptr  <= {PORTS*IdxW{1'b0}};
      grant       <= {PORTS*PORTS{1'b0}};
      grant_first <= {PORTS*PORTS{1'b0}};
      grant_valid <= 1'b0;
    end
  end

  // Port index n mod PORTS (n < 2*PORTS), as a pointer value.
  function automatic [IdxW-1:0] wrap(input integer n);
    integer wrapped;
    begin
      wrapped = (n >= PORTS) ? n - PORTS : n;
      wrap = wrapped[IdxW-1:0];
    end
  endfunction

  // Index visited at step `step` of a circular scan starting at ptr.
  function automatic integer wrap_from(input [IdxW-1:0] ptr, input integer step);
    integer n;
    begin
      n = {{(32-IdxW){1'b0}}, ptr} + step;
      wrap_from = (n >= PORTS) ? n - PORTS : n;
    end
  endfunction

endmodule

`default_nettype wire
