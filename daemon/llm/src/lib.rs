//! pi-llm: the provider-agnostic streaming LLM layer (pi-ai's role). Built by the pi-llm issue.
