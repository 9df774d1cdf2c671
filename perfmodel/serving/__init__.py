"""The serving layer above the engine's step equations: the declared result (``result``) and the mechanisms that
turn decode steps into served traffic."""
