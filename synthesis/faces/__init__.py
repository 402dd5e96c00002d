"""The author and designer faces: committed writing that a pass turns into a content entry
(author) or a frame skill (designer), at once, with no window (docs/synthesis.md, "Faces")."""
