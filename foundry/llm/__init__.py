"""Model providers behind one protocol: embedded llama.cpp, Ollama, OpenAI-compatible, scripted."""
