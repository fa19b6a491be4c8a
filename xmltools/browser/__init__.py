"""The browser: the only part of xmltools that imports Playwright.

The package stays light to import: :mod:`.base` (the seam the interpreter
talks to, and a stand-in) and :mod:`.settings` load no Playwright; a session
is :class:`xmltools.browser.session.BrowserSession`.
"""
