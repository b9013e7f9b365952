"""Observability: a notification topic per stack, alarms on the endpoints, models, cluster
and file system wired to it, the cluster's events routed to it, and generated dashboards."""
