"""Frames, seats and bans moved to synthesis/ (its migration 0007): only Django's state
forgets them here; their tables stay as they are."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("productions", "0006_frame_bans"),
        ("synthesis", "0007_frames_from_productions"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="FrameBan"),
                migrations.DeleteModel(name="Seat"),
                migrations.DeleteModel(name="Frame"),
            ],
        ),
    ]
