// InfiniBand VL arbiter (IBTA vol.1 §7.6.9): RTL twin of
// hw::make_ib_vl_arbiter (hw/egress_scheduler.cpp, IbVlArbiter).
//
// A high- and a low-priority table of (vl, weight) entries, weight in 64-byte
// units (0 = entry unused). Each table serves its entries in order: an entry
// sends while its remaining weight is > 0 (the last packet may overdraw it);
// entries whose VL has nothing ready are skipped and forfeit their turn.
// High wins unless more than high_limit x 4 KiB of high-priority data went out
// while a low-priority packet was ready; then one low packet is owed
// (cfg_high_limit_i = 255: unlimited; 0: one high packet).
//
// Tables come in on a configuration port (the VLArbitrationTable and
// PortInfo.VLHighLimit the subnet manager programs), static while running.
// A C++ table of n entries maps to the first n of TableDepth rows, the rest
// weight 0: the visiting order and weights are the same as the C++ modulo-n walk.
//
// Timing: the selection is combinational from head_bytes_i and the registers
// (the C++ select()). At the rising edge with update_i high and a selection, the
// selected VL's head packet (head_bytes_i of that VL) is committed (the C++
// update_state(vl, bytes)). With update_i low nothing changes.

`default_nettype none

module vl_arbiter #(
  parameter int unsigned NumVls     = 8,   // data VLs, 1..15 (VL15 bypasses the arbiter)
  parameter int unsigned TableDepth = 16,  // entries per table, 1..64 (VLArbHighCap/LowCap)
  parameter int unsigned BytesW     = 16,  // packet size width in bytes, >= 7
  localparam int unsigned IdxW = (TableDepth > 1) ? $clog2(TableDepth) : 1  // entry index width
) (
  // Clock and reset
  input  logic                              clk_i,              // rising edge commits
  input  logic                              rst_ni,             // asynchronous, active low: entry 0 of both tables

  // Configuration, static while running
  input  logic [TableDepth-1:0][3:0]        cfg_high_vl_i,      // high table: VL of each entry
  input  logic [TableDepth-1:0][7:0]        cfg_high_weight_i,  // high table: weight, 64-B units, 0 = unused
  input  logic [TableDepth-1:0][3:0]        cfg_low_vl_i,       // low table: VL of each entry
  input  logic [TableDepth-1:0][7:0]        cfg_low_weight_i,   // low table: weight, 64-B units, 0 = unused
  input  logic [7:0]                        cfg_high_limit_i,   // 4 KiB units; 255 = unlimited

  // Eligibility and commit
  input  logic [NumVls-1:0][BytesW-1:0]     head_bytes_i,       // head packet size per VL, 0 = nothing eligible
  input  logic                              update_i,           // commit: the selected VL sends its head packet

  // Selection (combinational)
  output logic                              sel_valid_o,        // some VL is selected
  output logic [3:0]                        sel_vl_o,           // the selected VL
  output logic                              sel_high_o,         // it was chosen from the high table

  // Debug: the committed state (hw: IbVlArbiter::debug_state), for lockstep
  output logic [IdxW-1:0]                   dbg_high_idx_o,     // high table entry being served
  output logic [7:0]                        dbg_high_left_o,    // its weight left, 64-B units
  output logic [IdxW-1:0]                   dbg_low_idx_o,      // low table entry being served
  output logic [7:0]                        dbg_low_left_o,     // its weight left, 64-B units
  output logic [15:0]                       dbg_high_blocks_o   // high blocks sent while low waited
);

  localparam int unsigned BlkW = BytesW - 6 + 1;  // 64-B blocks of one packet
  localparam int unsigned HighBlkW = 16;          // blocks sent by high while low waited (saturating)
  localparam logic [7:0] Unlimited = 8'd255;      // cfg_high_limit_i: no limit

  // Per-table position (hw: Table::idx, and Table::remaining = weight - used).
  logic [IdxW-1:0] high_idx_d, high_idx_q;    // high table entry being served
  logic [7:0]      high_used_d, high_used_q;  // blocks it has sent, < its weight
  logic [IdxW-1:0] low_idx_d, low_idx_q;      // low table entry being served
  logic [7:0]      low_used_d, low_used_q;    // blocks it has sent, < its weight
  logic [HighBlkW-1:0] high_blocks_d, high_blocks_q;  // hw: high_blocks_

  // VL has a packet ready, and its head packet size in blocks.
  logic [NumVls-1:0]           vl_ready;
  logic [NumVls-1:0][BlkW-1:0] vl_blocks;
  always_comb begin
    for (int unsigned v = 0; v < NumVls; v++) begin
      vl_ready[v]  = |head_bytes_i[v];
      vl_blocks[v] = BlkW'(({1'b0, head_bytes_i[v]} + (BytesW+1)'(63)) >> 6);
    end
  end

  // A 4-bit VL number has a packet ready (VLs >= NumVls never do).
  function automatic logic ready_of(logic [3:0] vl, logic [NumVls-1:0] ready);
    logic r;
    r = 1'b0;
    for (int unsigned v = 0; v < NumVls; v++) begin
      if (vl == 4'(v)) r = ready[v];
    end
    return r;
  endfunction

  // Scan candidates: an entry with budget left whose VL is ready; the current
  // entry's budget is what it has left, any other entry's is its full weight.
  logic [TableDepth-1:0] high_cand, low_cand;
  always_comb begin
    for (int unsigned e = 0; e < TableDepth; e++) begin
      high_cand[e] = ready_of(cfg_high_vl_i[e], vl_ready) &&
                     ((IdxW'(e) == high_idx_q) ? (cfg_high_weight_i[e] > high_used_q)
                                               : (cfg_high_weight_i[e] != '0));
      low_cand[e]  = ready_of(cfg_low_vl_i[e], vl_ready) &&
                     ((IdxW'(e) == low_idx_q) ? (cfg_low_weight_i[e] > low_used_q)
                                              : (cfg_low_weight_i[e] != '0));
    end
  end

  logic [TableDepth-1:0] high_gnt, low_gnt;  // one-hot first candidate from the current entry
  logic [IdxW-1:0]       high_e, low_e;      // its index
  logic                  high_ok, low_ok;    // the table has a candidate

  rr_select #(
    .NumReq (TableDepth)
  ) u_high_scan (
    .req_i   (high_cand),
    .ptr_i   (high_idx_q),
    .gnt_o   (high_gnt),
    .idx_o   (high_e),
    .valid_o (high_ok)
  );

  rr_select #(
    .NumReq (TableDepth)
  ) u_low_scan (
    .req_i   (low_cand),
    .ptr_i   (low_idx_q),
    .gnt_o   (low_gnt),
    .idx_o   (low_e),
    .valid_o (low_ok)
  );

  logic unused_gnt;  // the index form of the scans is used, not the one-hot form
  assign unused_gnt = ^{high_gnt, low_gnt};

  // High-priority limit: one low packet is owed once more than the limit went out.
  logic low_owed;
  assign low_owed = low_ok && (cfg_high_limit_i != Unlimited) &&
                    (high_blocks_q > HighBlkW'({cfg_high_limit_i, 6'd0}));

  assign sel_high_o  = high_ok && !low_owed;
  assign sel_valid_o = high_ok || low_ok;
  assign sel_vl_o    = sel_high_o ? cfg_high_vl_i[high_e] : (low_ok ? cfg_low_vl_i[low_e] : 4'd0);

  // Blocks of the packet being committed.
  logic [BlkW-1:0] sent_blocks;
  always_comb begin
    sent_blocks = '0;
    for (int unsigned v = 0; v < NumVls; v++) begin
      if (sel_vl_o == 4'(v)) sent_blocks = vl_blocks[v];
    end
  end

  // Serve entry e of a table: a move to another entry starts from its full weight;
  // once the weight is used up the next entry (wrapping) is loaded.
  function automatic void advance(input  logic [IdxW-1:0] idx_q, input logic [7:0] used_q,
                                  input  logic [IdxW-1:0] e, input logic [7:0] weight,
                                  input  logic [BlkW-1:0] blocks,
                                  output logic [IdxW-1:0] idx_d, output logic [7:0] used_d);
    logic [7:0]      used_before;  // what entry e had already sent
    logic [BlkW+8:0] used_new;
    used_before = (e == idx_q) ? used_q : 8'd0;
    used_new    = (BlkW+9)'(used_before) + (BlkW+9)'(blocks);
    if (used_new >= (BlkW+9)'(weight)) begin
      idx_d  = (e == IdxW'(TableDepth - 1)) ? '0 : e + 1'b1;
      used_d = '0;
    end else begin
      idx_d  = e;
      used_d = used_new[7:0];
    end
  endfunction

  always_comb begin
    high_idx_d    = high_idx_q;
    high_used_d   = high_used_q;
    low_idx_d     = low_idx_q;
    low_used_d    = low_used_q;
    high_blocks_d = high_blocks_q;
    if (update_i && sel_valid_o) begin
      if (sel_high_o) begin
        advance(high_idx_q, high_used_q, high_e, cfg_high_weight_i[high_e], sent_blocks,
                high_idx_d, high_used_d);
      end else begin
        advance(low_idx_q, low_used_q, low_e, cfg_low_weight_i[low_e], sent_blocks,
                low_idx_d, low_used_d);
      end
      // Only high traffic sent while low had something ready counts against the
      // limit; a low packet, or high with low idle, clears it.
      if (sel_high_o && low_ok) begin
        high_blocks_d = ((HighBlkW+1)'(high_blocks_q) + (HighBlkW+1)'(sent_blocks) >
                         (HighBlkW+1)'({HighBlkW{1'b1}})) ? '1 :
                        high_blocks_q + HighBlkW'(sent_blocks);
      end else begin
        high_blocks_d = '0;
      end
    end
  end

  assign dbg_high_idx_o    = high_idx_q;
  assign dbg_high_left_o   = cfg_high_weight_i[high_idx_q] - high_used_q;
  assign dbg_low_idx_o     = low_idx_q;
  assign dbg_low_left_o    = cfg_low_weight_i[low_idx_q] - low_used_q;
  assign dbg_high_blocks_o = high_blocks_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      high_idx_q    <= '0;
      high_used_q   <= '0;
      low_idx_q     <= '0;
      low_used_q    <= '0;
      high_blocks_q <= '0;
    end else begin
      high_idx_q    <= high_idx_d;
      high_used_q   <= high_used_d;
      low_idx_q     <= low_idx_d;
      low_used_q    <= low_used_d;
      high_blocks_q <= high_blocks_d;
    end
  end

  // Assertions (verilator --assert) and cover points (--coverage-user), sampled at the
  // rising edge outside reset, for static tables: the selected VL exists and has a
  // packet ready, it comes from a table entry with weight left, nothing is selected
  // while no VL is ready, and the table positions stay in range with less sent than
  // the current entry's weight.
  logic sva_off;  // own net: rst_ni stays a purely asynchronous reset for lint
  assign sva_off = !rst_ni;

  logic high_entry_ok, low_entry_ok;  // the scanned entry may serve the selected VL
  assign high_entry_ok = high_cand[high_e] && (cfg_high_vl_i[high_e] == sel_vl_o);
  assign low_entry_ok  = low_cand[low_e] && (cfg_low_vl_i[low_e] == sel_vl_o);

  SelEligible_A: assert property (@(posedge clk_i) disable iff (sva_off)
                                  sel_valid_o |-> 32'(sel_vl_o) < NumVls && ready_of(sel_vl_o, vl_ready))
    else $error("vl_arbiter: selected VL %0d is not eligible (ready %b)", sel_vl_o, vl_ready);
  SelFromTable_A: assert property (@(posedge clk_i) disable iff (sva_off)
                                   sel_valid_o |-> (sel_high_o ? high_entry_ok : low_entry_ok))
    else $error("vl_arbiter: VL %0d selected without a table entry to serve it", sel_vl_o);
  IdleIfNoneReady_A: assert property (@(posedge clk_i) disable iff (sva_off)
                                      !(|vl_ready) |-> !sel_valid_o)
    else $error("vl_arbiter: selection with no VL ready");
  IdxRange_A: assert property (@(posedge clk_i) disable iff (sva_off)
                               32'(high_idx_q) < TableDepth && 32'(low_idx_q) < TableDepth)
    else $error("vl_arbiter: table entries %0d/%0d out of range", high_idx_q, low_idx_q);
  UsedLtWeight_A: assert property (@(posedge clk_i) disable iff (sva_off)
                                   (high_used_q == '0 || high_used_q < cfg_high_weight_i[high_idx_q]) &&
                                   (low_used_q == '0 || low_used_q < cfg_low_weight_i[low_idx_q]))
    else $error("vl_arbiter: an entry has sent its weight (high %0d, low %0d)", high_used_q,
                low_used_q);

  HighSel_C: cover property (@(posedge clk_i) disable iff (sva_off)
                             update_i && sel_high_o && low_ok);
  LowSel_C: cover property (@(posedge clk_i) disable iff (sva_off)
                            update_i && sel_valid_o && !sel_high_o);
  HighLimit_C: cover property (@(posedge clk_i) disable iff (sva_off) update_i && low_owed);
  HighTableWrap_C: cover property (@(posedge clk_i) disable iff (sva_off)
                                   update_i && sel_high_o && high_idx_d < high_idx_q);

endmodule

`default_nettype wire
