"""LMiX core: errors, lifecycles, leases and realtime, LLM providers, accounts and the
models every app shares (LLM models, their calls)."""
