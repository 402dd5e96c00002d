"""The authoring models moved to authoring/ (its 0001): only Django's state forgets them
here; their tables stay as they are."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('lmix', '0007_prompt_controls'),
        ('productions', '0008_authoring_models'),
        ('synthesis', '0008_authoring_models'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(
                    model_name='loreentry',
                    name='affiliation',
                ),
                migrations.RemoveField(
                    model_name='membership',
                    name='affiliation',
                ),
                migrations.RemoveField(
                    model_name='persona',
                    name='affiliations',
                ),
                migrations.RemoveField(
                    model_name='assistant',
                    name='model',
                ),
                migrations.RemoveField(
                    model_name='assistant',
                    name='owner',
                ),
                migrations.RemoveField(
                    model_name='assistant',
                    name='persona',
                ),
                migrations.RemoveField(
                    model_name='loreentry',
                    name='owner',
                ),
                migrations.RemoveField(
                    model_name='loreentry',
                    name='persona',
                ),
                migrations.RemoveField(
                    model_name='loreentry',
                    name='world',
                ),
                migrations.RemoveField(
                    model_name='membership',
                    name='persona',
                ),
                migrations.RemoveField(
                    model_name='persona',
                    name='owner',
                ),
                migrations.RemoveField(
                    model_name='scenario',
                    name='owner',
                ),
                migrations.RemoveField(
                    model_name='world',
                    name='owner',
                ),
                migrations.DeleteModel(
                    name='Affiliation',
                ),
                migrations.DeleteModel(
                    name='Assistant',
                ),
                migrations.DeleteModel(
                    name='LoreEntry',
                ),
                migrations.DeleteModel(
                    name='Membership',
                ),
                migrations.DeleteModel(
                    name='Persona',
                ),
                migrations.DeleteModel(
                    name='Scenario',
                ),
                migrations.DeleteModel(
                    name='World',
                ),
            ],
        ),
    ]
