"""Questions and the people around them: chart-abstract votes, QA items, audit answers and flags, users,
assignments, submissions, verifications, reviews, error analysis and the action log (issues 11 and 12).

The tables are described in :mod:`zuhyo.construct.workspace.qa_tables`.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table('error_samples',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('run_set', sa.Text(), nullable=False),
    sa.Column('model', sa.String(length=200), nullable=False),
    sa.Column('sample_key', sa.String(length=400), nullable=False),
    sa.Column('payload', JSON, nullable=False),
    sa.Column('meta', JSON, nullable=False),
    sa.Column('created_at', TS, nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_error_samples')),
    sa.UniqueConstraint('run_set', 'model', 'sample_key', name='uq_error_samples_key')
    )
    op.create_table('users',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('display_name', sa.String(length=200), nullable=True),
    sa.Column('password_hash', sa.Text(), nullable=False),
    sa.Column('roles', JSON, nullable=False),
    sa.Column('locale', sa.String(length=8), nullable=False),
    sa.Column('active', sa.Boolean(), nullable=False),
    sa.Column('meta', JSON, nullable=False),
    sa.Column('created_at', TS, nullable=False),
    sa.Column('last_login_at', TS, nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_users')),
    sa.UniqueConstraint('name', name=op.f('uq_users_name'))
    )
    op.create_table('actions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=True),
    sa.Column('actor', sa.String(length=200), nullable=False),
    sa.Column('action', sa.String(length=64), nullable=False),
    sa.Column('target_type', sa.String(length=32), nullable=False),
    sa.Column('target_id', sa.Integer(), nullable=True),
    sa.Column('before', JSON, nullable=True),
    sa.Column('after', JSON, nullable=True),
    sa.Column('created_at', TS, nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_actions_user_id_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_actions'))
    )
    op.create_index(op.f('ix_actions_created_at'), 'actions', ['created_at'], unique=False)
    op.create_index('ix_actions_target', 'actions', ['target_type', 'target_id'], unique=False)
    op.create_table('error_tags',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('error_sample_id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('error_type', sa.String(length=64), nullable=False),
    sa.Column('note', sa.Text(), nullable=True),
    sa.Column('created_at', TS, nullable=False),
    sa.ForeignKeyConstraint(['error_sample_id'], ['error_samples.id'],
                            name=op.f('fk_error_tags_error_sample_id_error_samples')),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_error_tags_user_id_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_error_tags')),
    sa.UniqueConstraint('error_sample_id', 'user_id', name='uq_error_tags_key')
    )
    op.create_index(op.f('ix_error_tags_error_sample_id'), 'error_tags', ['error_sample_id'], unique=False)
    op.create_table('abstract_outcomes',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('document_id', sa.Integer(), nullable=False),
    sa.Column('outcome', sa.String(length=16), nullable=False),
    sa.Column('figure_id', sa.Integer(), nullable=True),
    sa.Column('votes', JSON, nullable=False),
    sa.Column('meta', JSON, nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=True),
    sa.Column('created_at', TS, nullable=False),
    sa.ForeignKeyConstraint(['document_id'], ['documents.id'], name=op.f('fk_abstract_outcomes_document_id_documents')),
    sa.ForeignKeyConstraint(['figure_id'], ['figures.id'], name=op.f('fk_abstract_outcomes_figure_id_figures')),
    sa.ForeignKeyConstraint(['run_id'], ['stage_runs.id'], name=op.f('fk_abstract_outcomes_run_id_stage_runs')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_abstract_outcomes'))
    )
    op.create_index(op.f('ix_abstract_outcomes_document_id'), 'abstract_outcomes', ['document_id'], unique=False)
    op.create_table('abstract_votes',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('document_id', sa.Integer(), nullable=False),
    sa.Column('model', sa.String(length=200), nullable=False),
    sa.Column('prompt_version', sa.String(length=64), nullable=False),
    sa.Column('figure_id', sa.Integer(), nullable=True),
    sa.Column('paper_summary', sa.Text(), nullable=True),
    sa.Column('reasoning', JSON, nullable=False),
    sa.Column('raw', sa.Text(), nullable=True),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('meta', JSON, nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=True),
    sa.Column('created_at', TS, nullable=False),
    sa.ForeignKeyConstraint(['document_id'], ['documents.id'], name=op.f('fk_abstract_votes_document_id_documents')),
    sa.ForeignKeyConstraint(['figure_id'], ['figures.id'], name=op.f('fk_abstract_votes_figure_id_figures')),
    sa.ForeignKeyConstraint(['run_id'], ['stage_runs.id'], name=op.f('fk_abstract_votes_run_id_stage_runs')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_abstract_votes')),
    sa.UniqueConstraint('document_id', 'model', 'prompt_version', name='uq_abstract_votes_key')
    )
    op.create_index(op.f('ix_abstract_votes_document_id'), 'abstract_votes', ['document_id'], unique=False)
    op.create_table('qa_items',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('item_key', sa.String(length=400), nullable=False),
    sa.Column('figure_id', sa.Integer(), nullable=False),
    sa.Column('origin', sa.String(length=16), nullable=False),
    sa.Column('style', sa.String(length=16), nullable=True),
    sa.Column('category', sa.String(length=64), nullable=True),
    sa.Column('aspect', sa.String(length=64), nullable=True),
    sa.Column('question', sa.Text(), nullable=False),
    sa.Column('answer', sa.Text(), nullable=False),
    sa.Column('answer_kind', sa.String(length=32), nullable=True),
    sa.Column('options', JSON, nullable=True),
    sa.Column('difficulty', JSON, nullable=False),
    sa.Column('key_points', JSON, nullable=False),
    sa.Column('axis', JSON, nullable=True),
    sa.Column('status', sa.String(length=32), nullable=False),
    sa.Column('reason', sa.Text(), nullable=True),
    sa.Column('revision', sa.Integer(), nullable=False),
    sa.Column('model', sa.String(length=200), nullable=True),
    sa.Column('prompt_version', sa.String(length=64), nullable=True),
    sa.Column('author_id', sa.Integer(), nullable=True),
    sa.Column('raw', sa.Text(), nullable=True),
    sa.Column('meta', JSON, nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=True),
    sa.Column('created_at', TS, nullable=False),
    sa.Column('updated_at', TS, nullable=False),
    sa.ForeignKeyConstraint(['author_id'], ['users.id'], name=op.f('fk_qa_items_author_id_users')),
    sa.ForeignKeyConstraint(['figure_id'], ['figures.id'], name=op.f('fk_qa_items_figure_id_figures')),
    sa.ForeignKeyConstraint(['run_id'], ['stage_runs.id'], name=op.f('fk_qa_items_run_id_stage_runs')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_qa_items')),
    sa.UniqueConstraint('item_key', name=op.f('uq_qa_items_item_key'))
    )
    op.create_index(op.f('ix_qa_items_author_id'), 'qa_items', ['author_id'], unique=False)
    op.create_index(op.f('ix_qa_items_figure_id'), 'qa_items', ['figure_id'], unique=False)
    op.create_index(op.f('ix_qa_items_status'), 'qa_items', ['status'], unique=False)
    op.create_table('assignments',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('step', sa.String(length=16), nullable=False),
    sa.Column('target_key', sa.String(length=400), nullable=False),
    sa.Column('figure_id', sa.Integer(), nullable=True),
    sa.Column('qa_item_id', sa.Integer(), nullable=True),
    sa.Column('round', sa.Integer(), nullable=False),
    sa.Column('slot', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('meta', JSON, nullable=False),
    sa.Column('created_at', TS, nullable=False),
    sa.Column('expires_at', TS, nullable=True),
    sa.Column('finished_at', TS, nullable=True),
    sa.ForeignKeyConstraint(['figure_id'], ['figures.id'], name=op.f('fk_assignments_figure_id_figures')),
    sa.ForeignKeyConstraint(['qa_item_id'], ['qa_items.id'], name=op.f('fk_assignments_qa_item_id_qa_items')),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_assignments_user_id_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_assignments'))
    )
    op.create_index('ix_assignments_user_status', 'assignments', ['user_id', 'status'], unique=False)
    op.create_index('uq_assignments_live', 'assignments', ['step', 'target_key', 'round', 'slot'], unique=True,
                    sqlite_where=sa.text("status IN ('open', 'submitted')"),
                    postgresql_where=sa.text("status IN ('open', 'submitted')"))
    op.create_table('qa_flags',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('qa_item_id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=32), nullable=False),
    sa.Column('fingerprint', sa.String(length=64), nullable=False),
    sa.Column('detail', sa.Text(), nullable=False),
    sa.Column('evidence', JSON, nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('resolution', sa.Text(), nullable=True),
    sa.Column('resolved_by_id', sa.Integer(), nullable=True),
    sa.Column('resolved_at', TS, nullable=True),
    sa.Column('meta', JSON, nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=True),
    sa.Column('created_at', TS, nullable=False),
    sa.ForeignKeyConstraint(['qa_item_id'], ['qa_items.id'], name=op.f('fk_qa_flags_qa_item_id_qa_items')),
    sa.ForeignKeyConstraint(['resolved_by_id'], ['users.id'], name=op.f('fk_qa_flags_resolved_by_id_users')),
    sa.ForeignKeyConstraint(['run_id'], ['stage_runs.id'], name=op.f('fk_qa_flags_run_id_stage_runs')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_qa_flags')),
    sa.UniqueConstraint('qa_item_id', 'kind', 'fingerprint', name='uq_qa_flags_key')
    )
    op.create_index(op.f('ix_qa_flags_qa_item_id'), 'qa_flags', ['qa_item_id'], unique=False)
    op.create_index(op.f('ix_qa_flags_status'), 'qa_flags', ['status'], unique=False)
    op.create_table('qa_model_answers',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('qa_item_id', sa.Integer(), nullable=False),
    sa.Column('purpose', sa.String(length=32), nullable=False),
    sa.Column('model', sa.String(length=200), nullable=False),
    sa.Column('prompt_version', sa.String(length=64), nullable=False),
    sa.Column('item_revision', sa.Integer(), nullable=False),
    sa.Column('answer', sa.Text(), nullable=True),
    sa.Column('raw', sa.Text(), nullable=True),
    sa.Column('verdict', sa.String(length=16), nullable=True),
    sa.Column('score', sa.Float(), nullable=True),
    sa.Column('judge', sa.String(length=200), nullable=True),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('meta', JSON, nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=True),
    sa.Column('created_at', TS, nullable=False),
    sa.ForeignKeyConstraint(['qa_item_id'], ['qa_items.id'], name=op.f('fk_qa_model_answers_qa_item_id_qa_items')),
    sa.ForeignKeyConstraint(['run_id'], ['stage_runs.id'], name=op.f('fk_qa_model_answers_run_id_stage_runs')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_qa_model_answers')),
    sa.UniqueConstraint('qa_item_id', 'purpose', 'model', 'prompt_version', 'item_revision',
                        name='uq_qa_model_answers_key')
    )
    op.create_index(op.f('ix_qa_model_answers_qa_item_id'), 'qa_model_answers', ['qa_item_id'], unique=False)
    op.create_table('reviews',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('qa_item_id', sa.Integer(), nullable=False),
    sa.Column('round', sa.Integer(), nullable=False),
    sa.Column('item_revision', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('rating', sa.String(length=16), nullable=False),
    sa.Column('comment', sa.Text(), nullable=True),
    sa.Column('correction', JSON, nullable=True),
    sa.Column('meta', JSON, nullable=False),
    sa.Column('created_at', TS, nullable=False),
    sa.ForeignKeyConstraint(['qa_item_id'], ['qa_items.id'], name=op.f('fk_reviews_qa_item_id_qa_items')),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_reviews_user_id_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_reviews')),
    sa.UniqueConstraint('qa_item_id', 'round', 'user_id', name='uq_reviews_key')
    )
    op.create_index(op.f('ix_reviews_qa_item_id'), 'reviews', ['qa_item_id'], unique=False)
    op.create_table('verifications',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('qa_item_id', sa.Integer(), nullable=False),
    sa.Column('round', sa.Integer(), nullable=False),
    sa.Column('item_revision', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('answer', sa.Text(), nullable=False),
    sa.Column('verdict', sa.String(length=16), nullable=False),
    sa.Column('judge', sa.String(length=200), nullable=False),
    sa.Column('judgment', JSON, nullable=False),
    sa.Column('meta', JSON, nullable=False),
    sa.Column('created_at', TS, nullable=False),
    sa.ForeignKeyConstraint(['qa_item_id'], ['qa_items.id'], name=op.f('fk_verifications_qa_item_id_qa_items')),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_verifications_user_id_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_verifications'))
    )
    op.create_index(op.f('ix_verifications_qa_item_id'), 'verifications', ['qa_item_id'], unique=False)
    op.create_table('submissions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('key', sa.String(length=100), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('step', sa.String(length=16), nullable=False),
    sa.Column('assignment_id', sa.Integer(), nullable=True),
    sa.Column('result', JSON, nullable=False),
    sa.Column('created_at', TS, nullable=False),
    sa.ForeignKeyConstraint(['assignment_id'], ['assignments.id'],
                            name=op.f('fk_submissions_assignment_id_assignments')),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_submissions_user_id_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_submissions')),
    sa.UniqueConstraint('key', name=op.f('uq_submissions_key'))
    )


def downgrade() -> None:
    op.drop_table('submissions')
    op.drop_table('verifications')
    op.drop_table('reviews')
    op.drop_table('qa_model_answers')
    op.drop_table('qa_flags')
    op.drop_table('assignments')
    op.drop_table('qa_items')
    op.drop_table('abstract_votes')
    op.drop_table('abstract_outcomes')
    op.drop_table('error_tags')
    op.drop_table('actions')
    op.drop_table('users')
    op.drop_table('error_samples')
