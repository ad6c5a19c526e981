# The project's IB VL arbiter (rtl/vl_arbiter.sv): the default switch.vl_arbiter_rtl_variant.
# 4 VLs x 8 table rows: the InfiniBand fabric of tests/test_rtl_vl_arbiter.cpp.
fabricsim_rtl_model(vl_arbiter
  TWIN        vl_arbiter ib_vl_arbiter
  FILELIST    ../vl_arbiter.f
  TOP         vl_arbiter
  CLOCK       clk_i
  RESET       rst_ni ACTIVE_LOW ASYNC
  HANDSHAKE   STROBE update_i
  LATENCY     0
  PORTS       head_bytes=head_bytes_i sel_valid=sel_valid_o sel_vl=sel_vl_o
              high_vl=cfg_high_vl_i high_weight=cfg_high_weight_i low_vl=cfg_low_vl_i
              low_weight=cfg_low_weight_i high_limit=cfg_high_limit_i
  SIZE_PARAMS vls=NumVls table_depth=TableDepth
  SIZES       4:8
  DEBUG       high_entry=dbg_high_idx_o high_left=dbg_high_left_o low_entry=dbg_low_idx_o
              low_left=dbg_low_left_o high_blocks=dbg_high_blocks_o)
