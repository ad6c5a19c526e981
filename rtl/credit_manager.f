// Per-VL credit manager (top: credit_manager). Paths are relative to this file (use with -F).
credit_manager.sv
