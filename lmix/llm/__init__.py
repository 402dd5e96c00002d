"""LLM providers behind one small interface; the app calls only `lmix.llm.client`."""
