"""osmeter fleet run: the probe on many hosts through Ansible (docs/fleet.md)."""
