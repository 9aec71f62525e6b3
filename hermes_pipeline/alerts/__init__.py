"""Alerts over the local observability store (spec 06 §11): the chapter's rules, three severities
with their delivery times, noise control kept in the store's ``alert_state`` table, and pluggable
notifiers (``webhook``, ``feishu``, ``email``). ``hermes-pipeline alerts`` runs them."""
