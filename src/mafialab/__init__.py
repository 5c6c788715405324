"""mafialab: a testbed that measures what LLM agents believe in Mafia-family games."""

__version__ = "0.1.0"
