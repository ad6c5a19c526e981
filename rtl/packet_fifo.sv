// Packet FIFO with cut-through and store-and-forward read modes: RTL twin of
// hw::PacketFifo (hw/packet_fifo.h).
//
// Words of packets go in with a last-word flag. In cut-through (saf_i = 0) the
// head word is readable as soon as it is stored, so a packet can leave while its
// tail is still arriving (and the reader may stall mid-packet when it catches up
// with the writer). In store-and-forward (saf_i = 1) the head word is readable
// only while a complete packet (its last word) is stored. saf_i is sampled every
// cycle; switch it between packets. A store-and-forward packet longer than Depth
// words can never become readable: size Depth for the largest packet.
//
// Timing: wr_ready_o, rd_valid_o, rd_data_o and rd_last_o are combinational from
// the registers (and saf_i); a word written at an edge is readable from the next
// cycle on; a full FIFO does not accept a write in the cycle it is read (no
// read-to-write bypass). Transfers happen at the rising edge where valid and
// ready are both high (AXI-Stream style handshake).

`default_nettype none

module packet_fifo #(
  parameter int unsigned DataW = 64,  // word width in bits
  parameter int unsigned Depth = 16,  // capacity in words, >= 2
  localparam int unsigned PtrW = $clog2(Depth),      // storage address width
  localparam int unsigned CntW = $clog2(Depth + 1)   // word/packet count width
) (
  // Clock and reset
  input  logic             clk_i,       // rising edge transfers words
  input  logic             rst_ni,      // asynchronous, active low: empty

  // Mode
  input  logic             saf_i,       // 1: store-and-forward, 0: cut-through

  // Write side
  input  logic             wr_valid_i,  // a word is offered
  input  logic [DataW-1:0] wr_data_i,   // the word
  input  logic             wr_last_i,   // it is the last word of its packet
  output logic             wr_ready_o,  // there is room for a word

  // Read side
  output logic             rd_valid_o,  // the head word may leave
  output logic [DataW-1:0] rd_data_o,   // the head word
  output logic             rd_last_o,   // it is the last word of its packet
  input  logic             rd_ready_i,  // the reader takes the head word

  // Status
  output logic [CntW-1:0]  words_o,     // words stored
  output logic [CntW-1:0]  packets_o    // complete packets stored (last words)
);

  if (Depth < 2) begin : g_bad_depth
    $error("packet_fifo: Depth must be at least 2");
  end

  logic [DataW:0]   mem_q [Depth];          // {last, data} per slot
  logic [PtrW-1:0]  wr_ptr_d, wr_ptr_q;     // next slot to write
  logic [PtrW-1:0]  rd_ptr_d, rd_ptr_q;     // head slot
  logic [CntW-1:0]  words_d, words_q;       // words stored
  logic [CntW-1:0]  packets_d, packets_q;   // last words stored

  logic do_write, do_read;

  assign wr_ready_o = words_q != CntW'(Depth);
  assign rd_valid_o = (words_q != '0) && (!saf_i || (packets_q != '0));
  assign rd_data_o  = mem_q[rd_ptr_q][DataW-1:0];
  assign rd_last_o  = mem_q[rd_ptr_q][DataW];

  assign do_write = wr_valid_i && wr_ready_o;
  assign do_read  = rd_valid_o && rd_ready_i;

  function automatic logic [PtrW-1:0] next_ptr(logic [PtrW-1:0] ptr);
    return (ptr == PtrW'(Depth - 1)) ? '0 : ptr + 1'b1;
  endfunction

  // The slot after the write pointer. FABRICSIM_FAULT_FIFO_WRAP injects a fault for the
  // tests that lockstep must catch (rtl/models/packet_fifo_wrap.cmake): the write pointer
  // wraps to slot 1, so the second lap reads a stale slot 0.
  logic [PtrW-1:0] wr_next;
`ifdef FABRICSIM_FAULT_FIFO_WRAP
  assign wr_next = (wr_ptr_q == PtrW'(Depth - 1)) ? PtrW'(1) : wr_ptr_q + 1'b1;
`else
  assign wr_next = next_ptr(wr_ptr_q);
`endif

  always_comb begin
    wr_ptr_d  = do_write ? wr_next : wr_ptr_q;
    rd_ptr_d  = do_read ? next_ptr(rd_ptr_q) : rd_ptr_q;
    words_d   = words_q + CntW'(do_write) - CntW'(do_read);
    packets_d = packets_q + CntW'(do_write && wr_last_i) - CntW'(do_read && rd_last_o);
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      wr_ptr_q  <= '0;
      rd_ptr_q  <= '0;
      words_q   <= '0;
      packets_q <= '0;
    end else begin
      wr_ptr_q  <= wr_ptr_d;
      rd_ptr_q  <= rd_ptr_d;
      words_q   <= words_d;
      packets_q <= packets_d;
    end
  end

  // Storage: no reset, a slot is only read after it was written.
  always_ff @(posedge clk_i) begin
    if (do_write) begin
      mem_q[wr_ptr_q] <= {wr_last_i, wr_data_i};
    end
  end

  assign words_o   = words_q;
  assign packets_o = packets_q;

  // Assertions (verilator --assert) and cover points (--coverage-user), sampled at the
  // rising edge outside reset: the FIFO never holds more than Depth words nor more
  // packets than words (either would also show a count wrapping below zero), never
  // reads from empty, the pointers stay in range and are words apart, and a
  // store-and-forward read starts only on a complete packet.
  logic sva_off;  // own net: rst_ni stays a purely asynchronous reset for lint
  assign sva_off = !rst_ni;

  WordsLeDepth_A: assert property (@(posedge clk_i) disable iff (sva_off) 32'(words_q) <= Depth)
    else $error("packet_fifo: %0d words stored in %0d", words_q, Depth);
  PacketsLeWords_A: assert property (@(posedge clk_i) disable iff (sva_off) packets_q <= words_q)
    else $error("packet_fifo: %0d packets in %0d words", packets_q, words_q);
  NoUnderflow_A: assert property (@(posedge clk_i) disable iff (sva_off) do_read |-> words_q != '0)
    else $error("packet_fifo: read from empty");
  PtrRange_A: assert property (@(posedge clk_i) disable iff (sva_off)
                               32'(wr_ptr_q) < Depth && 32'(rd_ptr_q) < Depth)
    else $error("packet_fifo: pointers %0d/%0d out of range", wr_ptr_q, rd_ptr_q);
  PtrDistance_A: assert property (@(posedge clk_i) disable iff (sva_off)
                                  (32'(rd_ptr_q) + 32'(words_q)) % Depth == 32'(wr_ptr_q))
    else $error("packet_fifo: pointers %0d/%0d are not %0d words apart", rd_ptr_q, wr_ptr_q,
                words_q);
  SafComplete_A: assert property (@(posedge clk_i) disable iff (sva_off)
                                  saf_i && rd_valid_o |-> packets_q != '0)
    else $error("packet_fifo: store-and-forward read without a complete packet");

  Full_C: cover property (@(posedge clk_i) disable iff (sva_off) words_q == CntW'(Depth));
  FullWriteRefused_C: cover property (@(posedge clk_i) disable iff (sva_off)
                                      wr_valid_i && !wr_ready_o && rd_ready_i && rd_valid_o);
  ReadAndWrite_C: cover property (@(posedge clk_i) disable iff (sva_off) do_write && do_read);
  SafHolds_C: cover property (@(posedge clk_i) disable iff (sva_off)
                              saf_i && words_q != '0 && packets_q == '0);
  CutThroughPartial_C: cover property (@(posedge clk_i) disable iff (sva_off)
                                       !saf_i && do_read && packets_q == '0);

endmodule

`default_nettype wire
