"""The base layer every stage writes through: atomic file writes (`atomic`), content hashes (`hashing`) and
UTC timestamps (`clock`). Nothing here imports from the rest of rmeval."""
