"""The simulated provider: who may ask for what, and at what cost.

Owns accounts and key lookup, access resolution (model, tier, entitlements, policies),
tier profiles, Ultrafast capacity, rate limits and their headers, reasoning budgets,
output limits, the prompt cache's policy (:mod:`.prompt_cache`) and the usage ledger (the
stored responses it answers from are kept in :mod:`mockserver.state.responses`). :mod:`.exchange` is one request as
the server saw it.

May import: engine, config, state, errors.

Read first: :mod:`.access`, then :mod:`.tiers`.
"""
