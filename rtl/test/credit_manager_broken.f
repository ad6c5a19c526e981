// Deliberately broken credit manager (top: credit_manager_broken), test only.
// Paths are relative to this file (use with -F).
credit_manager_broken.sv
