// DELIBERATELY BROKEN credit manager, for the lockstep test that must catch it
// (tests/test_rtl_credit_manager.cpp). Never use it in a design.
//
// The bug, a classic one in credit logic: a packet's blocks are rounded down
// (bytes >> log2(BlockBytes)) instead of up, so a packet that ends inside a
// block lends one block too few and the transmitter overruns the receiver.
// The ports are credit_manager.sv's; it refuses nothing (underflow_o and
// overflow_o stay low).

`default_nettype none

module credit_manager_broken #(
  parameter int unsigned NumVls     = 4,   // data VLs served by this port, >= 1
  parameter int unsigned BlockBytes = 64,  // credit granularity in bytes, a power of two
  parameter int unsigned CntW       = 16,  // credit counter width in blocks
  parameter int unsigned BytesW     = 16,  // packet size width in bytes
  localparam int unsigned VlW = (NumVls > 1) ? $clog2(NumVls) : 1  // VL index width
) (
  input  logic                          clk_i,             // rising edge applies consume/restore
  input  logic                          rst_ni,            // asynchronous, active low
  input  logic [NumVls-1:0][CntW-1:0]   cfg_capacity_i,    // receiver buffer per VL, in blocks
  input  logic [NumVls-1:0][BytesW-1:0] head_bytes_i,      // size of each VL's head packet, bytes
  output logic [NumVls-1:0]             can_send_o,        // enough credits for that packet
  input  logic                          consume_i,         // a packet starts on consume_vl_i
  input  logic [VlW-1:0]                consume_vl_i,      // its VL
  input  logic [BytesW-1:0]             consume_bytes_i,   // its size in bytes
  input  logic                          restore_i,         // blocks come back on restore_vl_i
  input  logic [VlW-1:0]                restore_vl_i,      // their VL
  input  logic [CntW-1:0]               restore_blocks_i,  // how many blocks
  output logic [NumVls-1:0][CntW-1:0]   avail_o,           // blocks held per VL
  output logic                          underflow_o,       // always low
  output logic                          overflow_o,        // always low
  output logic [NumVls-1:0][CntW-1:0]   dbg_used_o         // blocks lent per VL
);

  localparam int unsigned BlockShift = $clog2(BlockBytes);  // log2 of the block size

  logic [NumVls-1:0][CntW-1:0] used_d, used_q;  // blocks lent per VL

  always_comb begin
    used_d = used_q;
    for (int unsigned v = 0; v < NumVls; v++) begin
      avail_o[v]    = cfg_capacity_i[v] - used_q[v];
      can_send_o[v] = CntW'(head_bytes_i[v] >> BlockShift) <= avail_o[v];  // BUG: rounds down
    end
    if (consume_i) used_d[consume_vl_i] = used_d[consume_vl_i] + CntW'(consume_bytes_i >> BlockShift);  // BUG
    if (restore_i) used_d[restore_vl_i] = used_d[restore_vl_i] - restore_blocks_i;
  end

  assign underflow_o = 1'b0;
  assign overflow_o  = 1'b0;
  assign dbg_used_o  = used_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) used_q <= '0;
    else         used_q <= used_d;
  end

endmodule

`default_nettype wire
