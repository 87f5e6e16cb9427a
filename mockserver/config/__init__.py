"""The fixture format and the process settings, at the bottom of the package.

:mod:`.fixture` is the pydantic schema of a fixture file (models, tiers, profiles,
accounts, policies) and its loader; :mod:`.documents` reads fixture files as YAML
data and merges their ``extends:`` chain; :mod:`.faults` and :mod:`.scripts` are the
fixture's ``faults:`` and ``scripts:`` sections; :mod:`.settings` holds the CLI and
environment options.

May import: errors only.

Read first: :mod:`.fixture`.
"""
