"""Skills: prompt documents that shape a pass of one face (DESIGN.md, "Skill").

Three scopes: platform skills ship with LMiX as files in `files/` (synced into the database
after `migrate`, editable in the admin), frame skills are the GM's for one frame, user
skills each player's for their own character. For one face, `skills_for` takes, in each
category, the most specific skill (user over frame over platform); a category a platform
guard skill holds (the rules that keep secrets and agency) takes nothing else.
"""

from .loading import skills_for, winning_skills
from .platform import platform_skills_sync

__all__ = ["platform_skills_sync", "skills_for", "winning_skills"]
