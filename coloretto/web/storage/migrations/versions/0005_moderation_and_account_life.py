"""Moderation and the account's life cycle (issue 33): administrators, bans and deleted accounts;
chat messages hidden by a moderator; games ended by one; players' reports and blocks; the audit log
of every administrator's action; the events that tell every server process what a moderator (or the
command line) did; one-time password reset links.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-20
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Columns are added in place (SQLite's ALTER TABLE ADD COLUMN), as 0004 does: a table copied and
    # dropped instead would, with SQLite's foreign keys on, delete the rows that refer to it.
    with op.batch_alter_table("users", recreate="never") as batch:
        batch.add_column(sa.Column("is_admin", sa.Boolean(), nullable=False, server_default=sa.false()))
        batch.add_column(sa.Column("banned_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("ban_reason", sa.Text(), nullable=True))
        batch.add_column(sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("seats", recreate="never") as batch:
        batch.add_column(sa.Column("deleted", sa.Boolean(), nullable=False, server_default=sa.false()))
    with op.batch_alter_table("games", recreate="never") as batch:
        batch.add_column(sa.Column("stop_reason", sa.Text(), nullable=True))
    with op.batch_alter_table("chat_messages", recreate="never") as batch:
        batch.add_column(sa.Column("hidden_at", sa.DateTime(timezone=True), nullable=True))
    op.create_table(
        "blocks",
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
        sa.Column(
            "blocked_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_blocks_blocked_id", "blocks", ["blocked_id"])
    op.create_table(
        "reports",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("reporter_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("game_id", sa.String(16), sa.ForeignKey("games.id", ondelete="CASCADE"), nullable=True),
        sa.Column("chat_number", sa.Integer(), nullable=True),
        sa.Column("reported_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="SET NULL"), nullable=True),
        sa.Column("reported_name", sa.String(40), nullable=True),
        sa.Column("reason", sa.String(16), nullable=False),
        sa.Column("text", sa.Text(), nullable=False, server_default=""),
        sa.Column("status", sa.String(16), nullable=False, server_default="open"),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("resolved_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("resolved_by", sa.Integer(), sa.ForeignKey("users.id", ondelete="SET NULL"), nullable=True),
        sa.Column("resolution", sa.Text(), nullable=True),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_reports_status_created", "reports", ["status", "created_at"])
    op.create_index("ix_reports_reporter_id", "reports", ["reporter_id"])
    op.create_index("ix_reports_reported_id", "reports", ["reported_id"])
    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="SET NULL"), nullable=True),
        sa.Column("actor", sa.String(80), nullable=False),
        sa.Column("via", sa.String(8), nullable=False),
        sa.Column("action", sa.String(32), nullable=False),
        sa.Column("target", sa.String(120), nullable=False),
        sa.Column(
            "target_user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="SET NULL"), nullable=True
        ),
        sa.Column("reason", sa.Text(), nullable=False, server_default=""),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_audit_log_at", "audit_log", ["at"])
    op.create_table(
        "moderation_events",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("game_id", sa.String(16), nullable=True),
        sa.Column("data", sa.JSON(), nullable=True),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_moderation_events_at", "moderation_events", ["at"])
    op.create_table(
        "password_resets",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_password_resets_user_id", "password_resets", ["user_id"])


def downgrade() -> None:
    op.drop_index("ix_password_resets_user_id", "password_resets")
    op.drop_table("password_resets")
    op.drop_index("ix_moderation_events_at", "moderation_events")
    op.drop_table("moderation_events")
    op.drop_index("ix_audit_log_at", "audit_log")
    op.drop_table("audit_log")
    op.drop_index("ix_reports_reported_id", "reports")
    op.drop_index("ix_reports_reporter_id", "reports")
    op.drop_index("ix_reports_status_created", "reports")
    op.drop_table("reports")
    op.drop_index("ix_blocks_blocked_id", "blocks")
    op.drop_table("blocks")
    with op.batch_alter_table("chat_messages") as batch:
        batch.drop_column("hidden_at")
    with op.batch_alter_table("games") as batch:
        batch.drop_column("stop_reason")
    with op.batch_alter_table("seats") as batch:
        batch.drop_column("deleted")
    with op.batch_alter_table("users") as batch:
        batch.drop_column("deleted_at")
        batch.drop_column("ban_reason")
        batch.drop_column("banned_at")
        batch.drop_column("is_admin")
