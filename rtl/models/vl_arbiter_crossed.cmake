# A deliberately mis-integrated VL arbiter, test only: the project's rtl/vl_arbiter.sv with
# its high and low table pins crossed (a wiring fault, not an RTL one).
# tests/test_rtl_vl_arbiter.cpp adds it to show that lockstep catches it; the fabricsim
# binary neither links nor lists it.
fabricsim_rtl_model(vl_arbiter_crossed
  TWIN        vl_arbiter ib_vl_arbiter
  FILELIST    ../vl_arbiter.f
  TOP         vl_arbiter
  CLOCK       clk_i
  RESET       rst_ni ACTIVE_LOW ASYNC
  HANDSHAKE   STROBE update_i
  LATENCY     0
  PORTS       head_bytes=head_bytes_i sel_valid=sel_valid_o sel_vl=sel_vl_o
              high_vl=cfg_low_vl_i high_weight=cfg_low_weight_i low_vl=cfg_high_vl_i
              low_weight=cfg_high_weight_i high_limit=cfg_high_limit_i
  SIZE_PARAMS vls=NumVls table_depth=TableDepth
  SIZES       4:8
  DEBUG       high_entry=dbg_high_idx_o high_left=dbg_high_left_o low_entry=dbg_low_idx_o
              low_left=dbg_low_left_o high_blocks=dbg_high_blocks_o
  TEST_ONLY)
