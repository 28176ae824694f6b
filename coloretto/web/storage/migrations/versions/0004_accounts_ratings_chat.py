"""Accounts, sessions and ratings; rated, private, cancelled and rematched tables; resigned seats;
the chat of a table (issue 13).

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(40), nullable=False),
        sa.Column("name_key", sa.String(160), nullable=False),
        sa.Column("password_hash", sa.String(255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("name_key", name="uq_users_name_key"),
    )
    op.create_table(
        "user_sessions",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_user_sessions_user_id", "user_sessions", ["user_id"])
    op.create_index("ix_user_sessions_expires_at", "user_sessions", ["expires_at"])
    op.create_table(
        "throttle_events",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("key", sa.String(200), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_throttle_events_key_at", "throttle_events", ["key", "at"])
    op.create_index("ix_throttle_events_at", "throttle_events", ["at"])
    op.create_table(
        "ratings",
        sa.Column("player", sa.String(40), primary_key=True),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=True),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("user_id", name="uq_ratings_user_id"),
    )
    op.create_table(
        "rating_history",
        sa.Column("game_id", sa.String(16), sa.ForeignKey("games.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("seat", sa.Integer(), primary_key=True),
        sa.Column("player", sa.String(40), nullable=False),
        sa.Column("rank", sa.Float(), nullable=False),
        sa.Column("mu_before", sa.Float(), nullable=False),
        sa.Column("sigma_before", sa.Float(), nullable=False),
        sa.Column("mu_after", sa.Float(), nullable=False),
        sa.Column("sigma_after", sa.Float(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_rating_history_player_at", "rating_history", ["player", "created_at"])
    op.create_table(
        "chat_messages",
        sa.Column("game_id", sa.String(16), sa.ForeignKey("games.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("number", sa.Integer(), primary_key=True),
        sa.Column("seat", sa.Integer(), nullable=True),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="SET NULL"), nullable=True),
        sa.Column("name", sa.String(40), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    # Columns are added in place (SQLite's ALTER TABLE ADD COLUMN): a table copied and dropped
    # instead would, with SQLite's foreign keys on, delete the moves of every game with it.
    with op.batch_alter_table("games", recreate="never") as batch:
        batch.add_column(sa.Column("creator_seat", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("rated", sa.Boolean(), nullable=False, server_default=sa.false()))
        batch.add_column(sa.Column("private", sa.Boolean(), nullable=False, server_default=sa.false()))
        batch.add_column(
            sa.Column("ratings_applied", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("rematch_id", sa.String(16), nullable=True))
        batch.add_column(sa.Column("rematch_of", sa.String(16), nullable=True))
    if op.get_bind().dialect.name == "sqlite":
        # SQLite adds a column with its reference in place, but not a reference on its own
        op.execute("ALTER TABLE seats ADD COLUMN user_id INTEGER REFERENCES users (id) ON DELETE SET NULL")
    else:
        op.add_column("seats", sa.Column("user_id", sa.Integer(), nullable=True))
        op.create_foreign_key("fk_seats_user_id", "seats", "users", ["user_id"], ["id"], ondelete="SET NULL")
    with op.batch_alter_table("seats", recreate="never") as batch:
        batch.add_column(sa.Column("resigned", sa.Boolean(), nullable=False, server_default=sa.false()))
        batch.add_column(sa.Column("reserved_hash", sa.String(64), nullable=True))
        batch.create_index("ix_seats_user_id", ["user_id"])
        batch.create_index("uq_seats_game_user", ["game_id", "user_id"], unique=True)


def downgrade() -> None:
    with op.batch_alter_table("seats") as batch:
        batch.drop_index("uq_seats_game_user")
        batch.drop_index("ix_seats_user_id")
        batch.drop_column("reserved_hash")
        batch.drop_column("resigned")
        batch.drop_column("user_id")
    with op.batch_alter_table("games") as batch:
        batch.drop_column("rematch_of")
        batch.drop_column("rematch_id")
        batch.drop_column("ratings_applied")
        batch.drop_column("private")
        batch.drop_column("rated")
        batch.drop_column("creator_seat")
    op.drop_table("chat_messages")
    op.drop_index("ix_rating_history_player_at", "rating_history")
    op.drop_table("rating_history")
    op.drop_table("ratings")
    op.drop_index("ix_throttle_events_at", "throttle_events")
    op.drop_index("ix_throttle_events_key_at", "throttle_events")
    op.drop_table("throttle_events")
    op.drop_index("ix_user_sessions_expires_at", "user_sessions")
    op.drop_index("ix_user_sessions_user_id", "user_sessions")
    op.drop_table("user_sessions")
    op.drop_table("users")
