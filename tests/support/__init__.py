"""What the tests share: the fixture site's helpers, the fake browser, the loopback model servers, the parser oracle, the sample run and the docs' code blocks."""
