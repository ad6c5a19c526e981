# The project's iSLIP (rtl/islip_allocator.sv): the default switch.rtl_variant.
# 8 ports: the leaf-spine examples (radix 8); 16 ports: examples/single_switch.yaml.
fabricsim_rtl_model(islip_allocator
  TWIN        allocator islip
  FILELIST    ../islip_allocator.f
  TOP         islip_allocator
  CLOCK       clk_i
  RESET       rst_ni ACTIVE_LOW ASYNC
  HANDSHAKE   STROBE update_i
  LATENCY     0
  PORTS       req=req_i gnt=gnt_o
  SIZE_PARAMS inputs=NumIn outputs=NumOut iterations=Iterations
  SIZES       8:1 16:1 16:4
  DEBUG       grant_ptr=dbg_gptr_o accept_ptr=dbg_aptr_o)
