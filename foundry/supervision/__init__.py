"""Supervision: message supervisors, the L0 policy, the L1 supervisor, approvals and grants."""
