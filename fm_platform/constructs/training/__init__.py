"""Training side: the HyperPod cluster, its network, shared file system and lifecycle scripts."""
