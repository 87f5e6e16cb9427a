"""The scripts that draw the pictures of the README and the manual (``docs/images/``)."""
