-- The queries of spec 06 (the book chapter's own), to run unchanged in the sqlite3 shell against
-- $HERMES_HOME/observability/observability.sqlite3:
--
--   sqlite3 ~/.hermes/observability/observability.sqlite3
--   sqlite> .parameter set :skill 'pdf-tools'
--   sqlite> SELECT version, change_type, reason, changed_at FROM skill_history ... (Q-S1 below)
--
-- Timestamps are UTC text 'YYYY-MM-DD HH:MM:SS', so datetime('now', '-7 days') compares correctly.

-- Q-S1: version history of one skill, newest first
SELECT version, change_type, reason, changed_at
  FROM skill_history
 WHERE skill_name = :skill
 ORDER BY version DESC;

-- Q-S2: skills changed in the last 7 days, most changed first
SELECT skill_name, COUNT(*) AS change_count, MAX(changed_at) AS last_changed
  FROM skill_history
 WHERE changed_at >= datetime('now', '-7 days')
 GROUP BY skill_name
 ORDER BY change_count DESC;

-- Q-S3: drift signal — more than 5 refinements in the last 30 days
SELECT skill_name, COUNT(*) AS refine_count
  FROM skill_history
 WHERE change_type = 'refine'
   AND changed_at >= datetime('now', '-30 days')
 GROUP BY skill_name
HAVING COUNT(*) > 5
 ORDER BY refine_count DESC;

-- Q-S4: churn signal — created/deprecated 3 or more times in total
SELECT skill_name, COUNT(*) AS cycle_events
  FROM skill_history
 WHERE change_type IN ('create', 'deprecate')
 GROUP BY skill_name
HAVING COUNT(*) >= 3;

-- Q-M1: memory files edited most in the last 7 days
SELECT file_path, COUNT(*) AS edit_count
  FROM memory_changes
 WHERE changed_at >= datetime('now', '-7 days')
 GROUP BY file_path
 ORDER BY edit_count DESC;

-- Q-M2: who changes memory (last 30 days)
SELECT actor, COUNT(*) AS change_count
  FROM memory_changes
 WHERE changed_at >= datetime('now', '-30 days')
 GROUP BY actor;

-- Q-C1: reverts — a change restores what an earlier change by another session replaced (:days, e.g. 30)
SELECT a.file_path, a.id AS first_id, b.id AS revert_id, a.trigger_session_id AS first_session,
       b.trigger_session_id AS revert_session, a.changed_at AS first_at, b.changed_at AS revert_at
  FROM memory_changes a
  JOIN memory_changes b
    ON b.file_path = a.file_path AND b.id > a.id
   AND b.after_excerpt = a.before_excerpt
   AND b.trigger_session_id IS NOT a.trigger_session_id
 WHERE a.before_excerpt IS NOT NULL
   AND a.changed_at >= datetime('now', '-' || :days || ' days')
   AND b.changed_at >= datetime('now', '-' || :days || ' days')
 ORDER BY b.changed_at, b.id;

-- Q-C2: divergent rewrites — sessions rewrote the same passage differently (:days, e.g. 30)
SELECT a.file_path, a.id AS first_id, b.id AS second_id, a.trigger_session_id AS first_session,
       b.trigger_session_id AS second_session, a.changed_at AS first_at, b.changed_at AS second_at
  FROM memory_changes a
  JOIN memory_changes b
    ON b.file_path = a.file_path AND b.id > a.id
   AND a.before_excerpt IS NOT NULL AND b.before_excerpt = a.before_excerpt
   AND b.after_excerpt IS NOT a.after_excerpt
   AND b.trigger_session_id IS NOT a.trigger_session_id
 WHERE a.changed_at >= datetime('now', '-' || :days || ' days')
   AND b.changed_at >= datetime('now', '-' || :days || ' days')
 ORDER BY b.changed_at, b.id;
