"""Go2-class quadruped: the deploy-side folder (params, runtime profile)."""
