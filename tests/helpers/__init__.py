"""Helper scripts and plumbing for the robustness tests (not collected: no test_ files)."""
