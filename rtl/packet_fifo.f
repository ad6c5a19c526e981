// Cut-through / store-and-forward packet FIFO (top: packet_fifo). Paths are relative to this file (use with -F).
packet_fifo.sv
