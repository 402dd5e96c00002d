"""Character snapshots (issue 27, "Snapshots and interchange"): a character's template (its
persona) and its state in a frame at a moment, as versioned JSON after the seed's shape
(seeds/personality-snapshots.md; schema.py is its one definition and its published JSON
Schema); exported (build.py), imported into a seat, taken before a reset, and taken of
every live frame periodically (services.py). Records: synthesis/snapshot_models.py."""
