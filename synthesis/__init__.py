"""Synthesis: the realtime channel layer helpers shared by every live part of LMiX."""
