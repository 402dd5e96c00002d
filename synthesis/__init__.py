"""Synthesis: the frames engine (liquid, passes, outcomes, timers); built on lmix.realtime."""
