"""A weather chat agent on LangGraph: a tool, an approval interrupt, a subgraph and a store read."""
