"""Templates shipped with xmltools (the prompts/ folder of the repository)."""
