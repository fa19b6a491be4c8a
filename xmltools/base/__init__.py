"""Pure data and small helpers that every layer may use.

- :mod:`.quoting`: the one way text is cut and quoted;
- :mod:`.results`: what an action returns (observations, failures, screenshots);
- :mod:`.expectations`: assertions recorded with a transcript;
- :mod:`.mistakes`: the model's mistake, one shape with a kind and a code;
- :mod:`.progress`: the model's checklist of its task (Cline's ``task_progress``);
- :mod:`.comparison`: a screenshot comparison's masked regions and findings, as data;
- :mod:`.secrets`: secret values, resolved and masked;
- :mod:`.spelling`: the closest name to a mistyped one ("did you mean");
- :mod:`.urlpolicy`: which addresses the browser may open;
- :mod:`.schema`: JSON Schema helpers;
- :mod:`.serve`: serving a folder on 127.0.0.1;
- :mod:`.tracing`: the ``--tracing`` option, declared once, with each front end's default;
- :mod:`.threadloop`: one event loop on a thread, for the sync API.

Nothing here imports any other part of xmltools but :mod:`xmltools.errors`.
"""
