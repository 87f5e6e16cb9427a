"""Load scenarios: a real server process under load from a client, on the real clock."""
