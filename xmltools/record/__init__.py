"""What a run leaves behind: its turns, the transcript file, and the HTML report.

- :mod:`.turn`: what one assistant message did, as data;
- :mod:`.format`: the transcript's records and header, as pydantic models;
- :mod:`.transcript`: the writer and the loader;
- :mod:`.report`: a transcript (and its replay, if any) as one HTML page.

All three uses write and read transcripts, so this sits below them.
"""
