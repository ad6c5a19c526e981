// Per-VL link credit manager at a transmitter: RTL twin of one
// hw::CreditCounter (hw/credit.h) per data VL. The receiver buffer of each VL
// is counted in blocks of BlockBytes (IBTA vol.1 §7.9.4: 64-byte blocks); a
// packet may start only when the transmitter holds enough blocks for all of it.
//
// State is the number of blocks lent to the receiver per VL (used_q, reset to
// 0 = all credits held, as the C++ counter starts full); available =
// cfg_capacity_i - used. Keeping "lent" rather than "available" lets the
// capacity be a configuration input without a non-constant reset value.
//
// Timing: can_send_o and avail_o are combinational from the registers and
// head_bytes_i (the C++ can_send()/available() before this cycle's events).
// consume_i and restore_i take effect at the rising edge. Within one cycle the
// consume is applied first, then the restore (the C++ order consume();
// restore()). A consume needing more blocks than available is refused and
// raises underflow_o; a restore that would hold more than the capacity is
// refused and raises overflow_o (the C++ counter throws and keeps its state).
// Both flags are combinational, for the cycle of the offending request.

`default_nettype none

module credit_manager #(
  parameter int unsigned NumVls     = 4,   // data VLs served by this port, >= 1
  parameter int unsigned BlockBytes = 64,  // credit granularity in bytes, a power of two
  parameter int unsigned CntW       = 16,  // credit counter width in blocks
  parameter int unsigned BytesW     = 16,  // packet size width in bytes
  localparam int unsigned VlW  = (NumVls > 1) ? $clog2(NumVls) : 1,         // VL index width
  localparam int unsigned BlkW = BytesW - $clog2(BlockBytes) + 1,           // blocks of one packet
  localparam int unsigned CmpW = ((CntW > BlkW) ? CntW : BlkW) + 1          // comparison width
) (
  // Clock and reset
  input  logic                          clk_i,             // rising edge applies consume/restore
  input  logic                          rst_ni,            // asynchronous, active low: all credits held

  // Configuration, static while running
  input  logic [NumVls-1:0][CntW-1:0]   cfg_capacity_i,    // receiver buffer per VL, in blocks

  // Eligibility query (combinational)
  input  logic [NumVls-1:0][BytesW-1:0] head_bytes_i,      // size of each VL's head packet, bytes
  output logic [NumVls-1:0]             can_send_o,        // enough credits for that packet

  // Send: take the credits for a packet
  input  logic                          consume_i,         // a packet starts on consume_vl_i
  input  logic [VlW-1:0]                consume_vl_i,      // its VL, < NumVls
  input  logic [BytesW-1:0]             consume_bytes_i,   // its size in bytes (rounded up to blocks)

  // Credit return from the receiver
  input  logic                          restore_i,         // blocks come back on restore_vl_i
  input  logic [VlW-1:0]                restore_vl_i,      // their VL, < NumVls
  input  logic [CntW-1:0]               restore_blocks_i,  // how many blocks

  // Status
  output logic [NumVls-1:0][CntW-1:0]   avail_o,           // blocks held per VL (registered)
  output logic                          underflow_o,       // consume refused: not enough credits
  output logic                          overflow_o,        // restore refused: more than lent

  // Debug (co-simulation state compare)
  output logic [NumVls-1:0][CntW-1:0]   dbg_used_o         // blocks lent to the receiver per VL
);

  localparam int unsigned BlockShift = $clog2(BlockBytes);  // log2 of the block size

  if (BlockBytes != (32'd1 << BlockShift)) begin : g_bad_block
    $error("credit_manager: BlockBytes must be a power of two");
  end

  logic [NumVls-1:0][CntW-1:0] used_d, used_q;  // blocks lent to the receiver per VL

  // Blocks a packet of `bytes` consumes, rounded up (hw: blocks_for()).
  function automatic logic [BlkW-1:0] blocks_for(logic [BytesW-1:0] bytes);
    logic [BytesW:0] sum;
`ifdef FABRICSIM_FAULT_CREDIT_ROUND_DOWN
    sum = {1'b0, bytes};  // injected fault (rtl/models/credit_manager_broken.cmake): rounds down
`else
    sum = {1'b0, bytes} + (BytesW+1)'(BlockBytes - 1);
`endif
    return BlkW'(sum >> BlockShift);
  endfunction

  // Available blocks per VL; a capacity lowered below what is lent reads as 0.
  always_comb begin
    for (int unsigned v = 0; v < NumVls; v++) begin
      avail_o[v] = (cfg_capacity_i[v] > used_q[v]) ? cfg_capacity_i[v] - used_q[v] : '0;
    end
  end

  always_comb begin
    for (int unsigned v = 0; v < NumVls; v++) begin
      can_send_o[v] = CmpW'(blocks_for(head_bytes_i[v])) <= CmpW'(avail_o[v]);
    end
  end

  // Consume first, then restore, each refused on a conservation violation.
  logic [BlkW-1:0]             need;      // blocks of the packet being sent
  logic [NumVls-1:0][CntW-1:0] used_mid;  // lent after the consume

  always_comb begin
    need        = blocks_for(consume_bytes_i);
    underflow_o = consume_i && (CmpW'(need) > CmpW'(avail_o[consume_vl_i]));
    used_mid    = used_q;
    if (consume_i && !underflow_o) begin
      used_mid[consume_vl_i] = used_q[consume_vl_i] + CntW'(need);
    end
    overflow_o = restore_i && (restore_blocks_i > used_mid[restore_vl_i]);
    used_d     = used_mid;
    if (restore_i && !overflow_o) begin
      used_d[restore_vl_i] = used_mid[restore_vl_i] - restore_blocks_i;
    end
  end

  assign dbg_used_o = used_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      used_q <= '0;
    end else begin
      used_q <= used_d;
    end
  end

  // Assertions (verilator --assert) and cover points (--coverage-user), sampled at the
  // rising edge outside reset, for a static cfg_capacity_i: no VL ever has more blocks
  // lent than its capacity (which also catches a wrap below zero), requests name a VL
  // that exists, and an error flag only comes with its request.
  logic sva_off;  // own net: rst_ni stays a purely asynchronous reset for lint
  assign sva_off = !rst_ni;

  for (genvar v = 0; v < NumVls; v++) begin : g_sva_vl
    LentLeCapacity_A: assert property (@(posedge clk_i) disable iff (sva_off)
                                       used_q[v] <= cfg_capacity_i[v])
      else $error("credit_manager: VL %0d has %0d blocks lent of capacity %0d", v, used_q[v],
                  cfg_capacity_i[v]);
  end
  ConsumeVl_A: assert property (@(posedge clk_i) disable iff (sva_off)
                                consume_i |-> 32'(consume_vl_i) < NumVls)
    else $error("credit_manager: consume on VL %0d of %0d", consume_vl_i, NumVls);
  RestoreVl_A: assert property (@(posedge clk_i) disable iff (sva_off)
                                restore_i |-> 32'(restore_vl_i) < NumVls)
    else $error("credit_manager: restore on VL %0d of %0d", restore_vl_i, NumVls);
  FlagsOnRequest_A: assert property (@(posedge clk_i) disable iff (sva_off)
                                     (!underflow_o || consume_i) && (!overflow_o || restore_i))
    else $error("credit_manager: error flag without its request");

  logic [NumVls-1:0] exhausted;  // VL with a buffer and no credit left
  always_comb begin
    for (int unsigned v = 0; v < NumVls; v++) begin
      exhausted[v] = (cfg_capacity_i[v] != '0) && (avail_o[v] == '0);
    end
  end
  Exhausted_C: cover property (@(posedge clk_i) disable iff (sva_off) |exhausted);
  Underflow_C: cover property (@(posedge clk_i) disable iff (sva_off) underflow_o);
  Overflow_C: cover property (@(posedge clk_i) disable iff (sva_off) overflow_o);
  ConsumeRestoreSameVl_C: cover property (@(posedge clk_i) disable iff (sva_off)
                                          consume_i && restore_i && consume_vl_i == restore_vl_i);

endmodule

`default_nettype wire
