"""The fixture format and the process settings, at the bottom of the package.

:mod:`.fixture` is the pydantic schema of a fixture file and its loader, with its parts in
:mod:`.models` (models, tiers, profiles) and :mod:`.accounts` (accounts, limits, prices,
policies); :mod:`.documents` reads fixture files as YAML data and merges their ``extends:``
chain; :mod:`.faults` and :mod:`.script_rules` are the fixture's ``faults:`` and ``scripts:``
sections; :mod:`.settings` holds the CLI and environment options.

May import: errors only.

Read first: :mod:`.fixture`.
"""
