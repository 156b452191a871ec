//! pi-agent: the agent loop (pi-agent-core's role). Built by the agent sessions issue.
