"""Realtime plumbing below every live app: publishing to groups, the consumer base, leases."""
