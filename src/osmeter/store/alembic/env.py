"""Alembic's environment for osmeter stores: migrations run on the
connection osmeter opened (store/migrate.py), inside the one transaction it
holds, never from a configuration file or a URL of their own."""

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection)
with context.begin_transaction():  # a no-op: migrate.py holds the transaction
    context.run_migrations()
