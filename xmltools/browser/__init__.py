"""The browser controller: the only part of xmltools that imports Playwright."""
