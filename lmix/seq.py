"""Event sequence numbers: a counter column on the row events are numbered for (a frame's
`seq`, a production's `event_seq`), taken +1 per event in the transaction that changes the
data, so a client that sees a gap knows it missed one and reads again."""

from django.db import connection, models


def seq_next(model: type[models.Model], pk: object, field: str = "seq") -> int:
    """Take row `pk`'s next number from its counter `field` (call inside the changing
    transaction; the row stays locked until it ends). One raw statement: every event on the
    way to an outcome takes one.

    Raises:
        model.DoesNotExist: the row is gone.
    """
    meta = model._meta
    column = meta.get_field(field).column
    key = meta.pk.get_db_prep_value(meta.pk.to_python(pk), connection)
    with connection.cursor() as cursor:
        cursor.execute(
            f'UPDATE "{meta.db_table}" SET "{column}" = "{column}" + 1 '
            f'WHERE "{meta.pk.column}" = %s RETURNING "{column}"',
            [key],
        )
        row = cursor.fetchone()
    if row is None:
        raise model.DoesNotExist(f"The {meta.verbose_name} is gone.")
    return row[0]
