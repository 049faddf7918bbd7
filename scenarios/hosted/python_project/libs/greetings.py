"""A module of the project's local dependency ./libs: importable by the graph only because
langgraph.json lists the folder in "dependencies" (it is not a package of the project root)."""


def shout(text: str) -> str:
    return text.upper() + "!"
