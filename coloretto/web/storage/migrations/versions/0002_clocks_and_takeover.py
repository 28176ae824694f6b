"""Turn clocks per table, seats a bot has taken over, where each turn began, and who created a
game (a digest of the address, for the limit of games waiting per client across processes).

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("move_seconds", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("game_seconds", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("turn_started_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("creator", sa.String(64), nullable=True))
        batch.create_index("ix_games_creator", ["creator"])
    with op.batch_alter_table("seats") as batch:
        batch.add_column(sa.Column("away", sa.Boolean(), nullable=False, server_default=sa.false()))
        batch.add_column(sa.Column("time_used", sa.Float(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("seats") as batch:
        batch.drop_column("time_used")
        batch.drop_column("away")
    with op.batch_alter_table("games") as batch:
        batch.drop_index("ix_games_creator")
        batch.drop_column("creator")
        batch.drop_column("turn_started_at")
        batch.drop_column("game_seconds")
        batch.drop_column("move_seconds")
